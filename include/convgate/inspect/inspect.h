// `convgate inspect PATH`: what a file or folder is and what it holds, as one JSON document and as
// text. The format is told from the content (io/file_format.h), not the extension:
//   - an ONNX model: format, sha256, IR version, opsets, producer, inputs and outputs, op
//     histogram, parameters (initializers and Constant nodes), the detected task;
//   - tensors (.npy, .npz): each tensor's name, dtype, shape, min, max, mean, NaN and Inf counts;
//   - an ONNX test case folder (model.onnx optional, test_data_set_N/input_K.pb, output_K.pb) or
//     one test_data_set_N folder: every data set's inputs and outputs like tensors above, named
//     after model.onnx where it is there, and that model's summary;
//   - a model format convgate does not parse as ONNX (TorchScript, a PyTorch checkpoint, a pickle,
//     safetensors, OpenVINO IR, TFLite, GGUF, HDF5, ...): what the file is, what can be read from
//     it without running foreign code (a TorchScript archive's forward() signature and weight
//     bytes, safetensors' tensor list, an OpenVINO IR's inputs and layers), and which convgate
//     command takes it.
// Every document has "schema_version", "path" and "format"; a regular file's also has
// "verification" (inspect/model_file.h VerifyModelFile: a whole parse, external data present and
// inside the model's folder, size, sha256), and its text a last line saying how it went.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "convgate/core/limits.h"
#include "convgate/core/status.h"
#include "convgate/graph/onnx_model.h"

namespace convgate::inspect {

struct Inspection {
  nlohmann::json json;
  std::string text;  // ends with a newline
};

// Describes `path` as above. Errors name the path and are the cases with nothing to show: a
// missing path (NotFound), an unreadable one (Unavailable), a file of a known format that is
// truncated or corrupt, and bytes that are neither ONNX nor any format above (DataLoss, saying
// whether an ONNX model looks truncated or the file is not ONNX at all). Tensor files are read
// under `limits` (io/npz.h): a tensor or archive over them, a FIFO or a device, is
// FailedPrecondition naming it.
Result<Inspection> InspectPath(const std::filesystem::path& path, const Limits& limits = Limits());

// An ONNX model's summary as `inspect --json` shows it (the "model" of a test case's document
// too): {"schema_version", "ir_version", "opsets", "producer", "inputs", "outputs", "ops", ...}.
// Its schema version is its own; it started at report.json's version 2 and kept it.
inline constexpr int kModelSummarySchemaVersion = 2;
nlohmann::json ModelSummaryJson(const graph::ModelSummary& summary);
// The same summary as `inspect` prints it.
std::string ModelSummaryText(const graph::ModelSummary& summary);

}  // namespace convgate::inspect
