// Reading ONNX models for the built-in converters and checking what any converter wrote.
#include <onnx/checker.h>

#include <exception>

#include "convert/converter.h"
#include "convgate/core/file_util.h"
#include "graph/model_proto.h"

namespace convgate::convert {

Result<std::string> ReadModelBytes(const std::filesystem::path& path) {
  Result<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  if (bytes->empty()) return Status::DataLoss(path.string() + " is empty, not an ONNX model");
  return bytes;
}

Status CheckOnnxModelFile(const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadModelBytes(path));
  CONVGATE_RETURN_IF_ERROR(graph::ParseModelProto(bytes, path).status());
  try {
    // The path form resolves external data relative to the model's folder.
    onnx::checker::check_model(path.string());
  } catch (const std::exception& error) {
    return Status::DataLoss(path.string() + " fails ONNX's checker: " + error.what());
  }
  return Status::OK();
}

}  // namespace convgate::convert
