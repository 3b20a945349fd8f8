// Reading ONNX models for the built-in converters and checking what any converter wrote.
#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <exception>

#include "convert/converter.h"
#include "convgate/core/file_util.h"
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

namespace {}  // namespace

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

namespace {

void RelocateTensor(onnx::TensorProto& tensor, const std::string& from, const std::string& to) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
  for (onnx::StringStringEntryProto& entry : *tensor.mutable_external_data()) {
    if (entry.key() == "location" && entry.value() == from) entry.set_value(to);
  }
}

void RelocateGraph(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) RelocateTensor(tensor, from, to);
  for (onnx::SparseTensorProto& sparse : *graph.mutable_sparse_initializer()) {
    RelocateTensor(*sparse.mutable_values(), from, to);
    RelocateTensor(*sparse.mutable_indices(), from, to);
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) RelocateTensor(*attribute.mutable_t(), from, to);
      for (onnx::TensorProto& tensor : *attribute.mutable_tensors()) {
        RelocateTensor(tensor, from, to);
      }
      if (attribute.has_g()) RelocateGraph(*attribute.mutable_g(), from, to);
      for (onnx::GraphProto& subgraph : *attribute.mutable_graphs()) {
        RelocateGraph(subgraph, from, to);
      }
    }
  }
}

}  // namespace

Result<std::string> RelocateExternalData(const std::filesystem::path& path, const std::string& from,
                                         const std::string& to) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadModelBytes(path));
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, graph::ParseModelProto(bytes, path));
  RelocateGraph(*model.mutable_graph(), from, to);
  std::string relocated;
  if (!model.SerializeToString(&relocated)) {
    return Status::Internal("cannot serialize " + path.string() + " again");
  }
  return relocated;
}

}  // namespace convgate::convert
