// What every kind of conversion provides to the driver in convert.cc: its identity (for the cache
// key and the record) and one attempt at writing the output (internal to src/convert).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "convert/params.h"
#include "convgate/convert/convert.h"
#include "convgate/core/status.h"
#include "convgate/core/subprocess.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace convgate::convert {

// How one run of a converter ended.
struct AttemptResult {
  ConversionError error = ConversionError::kNone;
  std::string problem;     // "exited with code 1", "timed out after 5 s", ...
  bool transient = false;  // worth retrying (retry.h)
  std::string log_tail;    // the last lines of its stderr
  std::vector<std::string> notes;
  std::string tool_version;  // when the run reports its own version (torch export)

  bool ok() const { return error == ConversionError::kNone; }
};

// One attempt: convert `source` into `out` (a fresh path in a private work directory) within
// `timeout_seconds`.
using AttemptFn = std::function<AttemptResult(
    const std::filesystem::path& source, const std::filesystem::path& out, double timeout_seconds)>;

// What a converter writes at `out`.
enum class OutputLayout {
  kFile,        // one model file (an .onnx may keep its weights in ExternalDataPath(out))
  kOpenvinoIr,  // an OpenVINO IR: out is model.xml, its weights model.bin beside it
  kFolder,      // a folder of files (a Hugging Face export); main_file names the model in it
};

struct Converter {
  std::string tool;          // "onnx version converter", "convgate fp16", ...
  std::string tool_version;  // "1.12.0", ...
  std::string display;       // how messages name it: "onnx version converter (opset 17)"
  // Whatever else decides the output beyond the source, kind, tool, version and parameters
  // (an external converter's argv template and the hashes of its program and scripts).
  std::string identity;
  // The source named in the request need not exist (torch export from a torchvision name).
  bool source_is_file = true;
  AttemptFn attempt;
  OutputLayout layout = OutputLayout::kFile;
  // kFolder, when set: the model file in an output folder that the record's output_path names
  // ("model.onnx"), or NotFound when the folder holds none; asked again on a cache hit. Unset: the
  // output_path is the folder itself (an optimum-intel export, which the hf backend runs whole).
  std::function<Result<std::string>(const std::filesystem::path& folder)> main_file;
};

// One per kind; each validates its parameters (InvalidArgument, a kBadRequest) and finds its
// tools (NotFound: kConverterMissing) before anything runs.
Result<Converter> MakeOpsetConverter(std::string_view target, const Params& params);
// `half_type`: onnx::TensorProto::FLOAT16 (fp16) or BFLOAT16 (bf16).
Result<Converter> MakeFp16Converter(const Params& params, int32_t half_type);
Result<Converter> MakeOrtOptimizedConverter(std::string_view level, const Params& params);
Result<Converter> MakeTorchExportConverter(const ConversionRequest& request);
Result<Converter> MakeExternalConverter(const ConversionRequest& request);
// ort_quantize.cc: "int8-dynamic", "int8-static".
Result<Converter> MakeQuantizeConverter(const ConversionRequest& request);
// openvino_export.cc: "openvino", "openvino:fp16", "optimum-openvino", "optimum-onnx".
Result<Converter> MakeOpenvinoConverter(const ConversionRequest& request);

// "torch 2.13.0+cpu, torchvision 0.14.1": the installed versions of `packages` as `python` sees
// them, read by importlib.metadata (importing torch or openvino would take seconds). NotFound
// names the package missing (python_packages.cc).
Result<std::string> PythonPackageVersions(const std::string& python,
                                          const std::vector<std::string>& packages);
// A torch.export program (.pt2, what torch.export.save writes), by its name: its bytes are a zip
// like any PyTorch archive.
bool IsExportedProgramFile(const std::filesystem::path& source);

// A built-in conversion: reads `source`, writes `out`, returns notes.
using BuiltinFn = std::function<Result<std::vector<std::string>>(
    const std::filesystem::path& source, const std::filesystem::path& out)>;

// Runs `convert` in a forked child (builtin_child.cc), so the timeout can stop it and a crash in
// a converter library is a failed attempt. The child's Status and notes come back through a file
// beside `out`.
AttemptResult RunBuiltinIsolated(const BuiltinFn& convert, const std::filesystem::path& source,
                                 const std::filesystem::path& out, double timeout_seconds);

// Reading and writing ONNX models for the built-in converters (onnx_file.cc). Errors name `path`.
Result<std::string> ReadModelBytes(const std::filesystem::path& path);
// Why ONNX's checker (libonnx, Debian's 1.12: IR 8, opsets up to 17) cannot judge `model` ("opset
// 18 of domain '' (the checker knows up to 17)"), or empty when it can. Every check of a model by
// libonnx (the checker, strict type inference) asks this first.
std::string NewerThanChecker(const onnx::ModelProto& model);
// ONNX's checker on the model at `path`: DataLoss when it fails; a note (empty when checked) when
// the model is newer than the checker and only its parse was checked.
Result<std::string> CheckOnnxModelFile(const std::filesystem::path& path);
// True when some initializer of the model at `path` keeps its data in an external file.
Result<bool> HasExternalData(const std::filesystem::path& path);
// The model at `path`, serialized again with every external data location `from` renamed `to`
// (file names in the model's folder), in the graph and in every subgraph.
Result<std::string> RelocateExternalData(const std::filesystem::path& path, const std::string& from,
                                         const std::string& to);

// Where a converter whose output `out` keeps its weights outside the model writes them:
// "<out's file name>.data" beside it. The driver keeps that file with the output (in the cache
// entry, and beside -o under -o's own name).
std::filesystem::path ExternalDataPath(const std::filesystem::path& out);

}  // namespace convgate::convert
