// The model file verification step (the reference pipeline's "verify the model file before the
// benchmark"): what a model file is, whether it parses as that, whether the files it refers to are
// there, and its size and sha256. One implementation for `convgate batch`'s preflight and
// `convgate inspect`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "convgate/core/limits.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/io/file_format.h"

namespace convgate::inspect {

// An initializer's external data file, as the ONNX model names it ('location').
struct ExternalDataFile {
  std::string location;        // as written in the model
  std::filesystem::path path;  // resolved against the model's folder
  uint64_t size = 0;           // 0 when absent
  bool present = false;        // a regular file inside the model's folder
};

struct ModelFileCheck {
  std::filesystem::path path;
  // "onnx", "onnx+external-data", "torchscript", "safetensors", "npz", "npy", "folder", or the
  // name of another format (io::FileFormatName) the step does not parse.
  std::string format;
  uint64_t size = 0;   // bytes of the file itself (not its external data)
  std::string sha256;  // of the file itself; "" for a folder
  std::vector<ExternalDataFile> external_data;
  std::optional<graph::ModelSummary> onnx;  // an ONNX model's summary (batch's model type)
  // "" when the file passed; else "missing-file" (it, or an external data file, is not there) or
  // "corrupt-file" (empty, truncated, wrong magic, does not parse, an external data location that
  // escapes the model's folder), and `problem` names the file and what is wrong.
  std::string category;
  std::string problem;

  bool ok() const { return category.empty(); }
};

// Verifies `path`: exists and is readable; the format from its content (io::SniffFile); a parse
// of the whole file as that format (ONNX: graph::SummarizeOnnxModel; npy, npz, safetensors: their
// readers under `limits`; TorchScript: its zip directory, which SniffFile reads); for ONNX, every
// external data location is relative, stays inside the model's folder (no "..", no absolute path)
// and names a regular file there; size and sha256. A folder passes as "folder" (its files are the
// runtime's to read). Never fails: what is wrong is data in the result.
ModelFileCheck VerifyModelFile(const std::filesystem::path& path, const Limits& limits = Limits());

// {"format", "size", "sha256", "external_data": [{location, size, present}], "passed",
// "category", "problem"}: inspect's "verification".
nlohmann::json ModelFileCheckJson(const ModelFileCheck& check);
// "verified: onnx+external-data, 2.1 KiB, sha256 ..., external data: weights.bin (1.0 MiB)" or
// "verification FAILED (missing-file): ...".
std::string ModelFileCheckText(const ModelFileCheck& check);

}  // namespace convgate::inspect
