// Reading ONNX models for the built-in converters and checking what any converter wrote.
#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <exception>

#include "convert/converter.h"
#include "convgate/core/file_util.h"
#include "convgate/graph/internal/external_data.h"
#include "convgate/graph/internal/model_proto.h"
#include "convgate/graph/onnx_model.h"

namespace convgate::convert {

Result<std::string> ReadModelBytes(const std::filesystem::path& path) {
  Result<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  if (bytes->empty()) return Status::DataLoss(path.string() + " is empty, not an ONNX model");
  return bytes;
}

std::string NewerThanChecker(const onnx::ModelProto& model) {
  if (model.ir_version() > onnx::Version_MAX) {
    return "IR version " + std::to_string(model.ir_version()) + " (the checker knows up to " +
           std::to_string(onnx::Version_MAX) + ")";
  }
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    const std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    auto range = ranges.find(domain);
    if (range != ranges.end() && opset.version() > range->second.second) {
      return "opset " + std::to_string(opset.version()) + " of domain '" + domain +
             "' (the checker knows up to " + std::to_string(range->second.second) + ")";
    }
  }
  return "";
}

Result<std::string> CheckOnnxModelFile(const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadModelBytes(path));
  CONVGATE_ASSIGN_OR_RETURN(const onnx::ModelProto model, graph::ParseModelProto(bytes, path));
  if (std::string newer = NewerThanChecker(model); !newer.empty()) {
    return "ONNX's checker (libonnx) was skipped: the model has " + newer +
           "; ONNX Runtime's load of it is the check";
  }
  try {
    // The path form resolves external data relative to the model's folder.
    onnx::checker::check_model(path.string());
  } catch (const std::exception& error) {
    return Status::DataLoss(path.string() + " fails ONNX's checker: " + error.what());
  }
  return std::string();
}

Result<bool> HasExternalData(const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadModelBytes(path));
  CONVGATE_ASSIGN_OR_RETURN(graph::ModelSummary summary,
                            graph::SummarizeOnnxModelBytes(bytes, path));
  return summary.has_external_data;
}

Result<std::string> RelocateExternalData(const std::filesystem::path& path, const std::string& from,
                                         const std::string& to) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadModelBytes(path));
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, graph::ParseModelProto(bytes, path));
  (void)graph::ForEachTensor(*model.mutable_graph(), [&](onnx::TensorProto& tensor) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return Status::OK();
    for (onnx::StringStringEntryProto& entry : *tensor.mutable_external_data()) {
      if (entry.key() == "location" && entry.value() == from) entry.set_value(to);
    }
    return Status::OK();
  });
  std::string relocated;
  if (!model.SerializeToString(&relocated)) {
    return Status::Internal("cannot serialize " + path.string() + " again");
  }
  return relocated;
}

}  // namespace convgate::convert
