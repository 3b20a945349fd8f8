// SingleNodeModel and InferValueBytes: one node cut out of a graph, and the sizes of its values.
#include "convgate/graph/node_model.h"

#include <onnx/shape_inference/implementation.h>

#include <set>

#include "convgate/graph/internal/model_proto.h"
#include "graph/onnx_types.h"

namespace convgate::graph {
namespace {

// The inverse of DTypeFromOnnx over ONNX's numbered element types (1..TensorProto's last).
int32_t OnnxElemTypeOf(DType dtype) {
  constexpr int32_t kLastElemType = 32;
  for (int32_t elem_type = 1; elem_type <= kLastElemType; ++elem_type) {
    if (DTypeFromOnnx(elem_type) == dtype) return elem_type;
  }
  return 0;
}

void AddTypedInput(onnx::GraphProto& graph, const std::string& name, const Tensor& tensor) {
  onnx::ValueInfoProto* input = graph.add_input();
  input->set_name(name);
  onnx::TypeProto::Tensor* type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(OnnxElemTypeOf(tensor.dtype()));
  onnx::TensorShapeProto* shape = type->mutable_shape();
  for (size_t axis = 0; axis < tensor.shape().rank(); ++axis) {
    shape->add_dim()->set_dim_value(tensor.shape().dim(axis));
  }
}

const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

Status AddNodeInputs(const onnx::GraphProto& source, const onnx::NodeProto& node,
                     const TensorMap& feeds, const std::filesystem::path& path,
                     onnx::GraphProto& graph) {
  std::set<std::string> added;
  for (const std::string& name : node.input()) {
    if (name.empty() || !added.insert(name).second) continue;
    // A fed tensor wins over an initializer of the same name: a converter may have folded into a
    // constant what the source computes, and the caller feeds the source's value.
    if (const Tensor* fed = feeds.Find(name)) {
      AddTypedInput(graph, name, *fed);
    } else if (const onnx::TensorProto* initializer = FindInitializer(source, name)) {
      *graph.add_initializer() = *initializer;
    } else {
      return Status::NotFound(path.string() + ": node '" + node.name() + "' input '" + name +
                              "' is neither an initializer nor a fed tensor");
    }
  }
  return Status::OK();
}

// Runtimes want typed graph outputs: the types ONNX shape inference gives the one-node model (its
// inputs are fully typed), else what the original graph declares for the value.
void TypeOutputs(const onnx::GraphProto& original, onnx::ModelProto& single) {
  onnx::ModelProto inferred = single;
  try {
    onnx::shape_inference::InferShapes(inferred);
  } catch (const std::exception&) {
    // best effort: fall back to the original graph's declarations below
  }
  auto find_type = [](const auto& infos, const std::string& name) -> const onnx::TypeProto* {
    for (const onnx::ValueInfoProto& info : infos) {
      if (info.name() == name && info.has_type()) return &info.type();
    }
    return nullptr;
  };
  for (onnx::ValueInfoProto& output : *single.mutable_graph()->mutable_output()) {
    const onnx::TypeProto* type = find_type(inferred.graph().value_info(), output.name());
    if (type == nullptr) type = find_type(inferred.graph().output(), output.name());
    if (type == nullptr) type = find_type(original.value_info(), output.name());
    if (type == nullptr) type = find_type(original.output(), output.name());
    if (type != nullptr) *output.mutable_type() = *type;
  }
}

Result<std::string> CutNode(const onnx::ModelProto& model, size_t node_index,
                            const TensorMap& feeds, const std::filesystem::path& path) {
  const onnx::GraphProto& source = model.graph();
  if (node_index >= static_cast<size_t>(source.node_size())) {
    return Status::InvalidArgument(path.string() + ": no node " + std::to_string(node_index) +
                                   " (the graph has " + std::to_string(source.node_size()) + ")");
  }
  onnx::ModelProto single;
  single.set_ir_version(model.ir_version());
  *single.mutable_opset_import() = model.opset_import();
  *single.mutable_functions() = model.functions();
  single.set_producer_name("convgate per-node");
  onnx::GraphProto& graph = *single.mutable_graph();
  graph.set_name("single_node");
  const onnx::NodeProto& node = source.node(static_cast<int>(node_index));
  *graph.add_node() = node;
  CONVGATE_RETURN_IF_ERROR(AddNodeInputs(source, node, feeds, path, graph));
  for (const std::string& output : node.output()) {
    if (!output.empty()) graph.add_output()->set_name(output);
  }
  TypeOutputs(source, single);
  std::string bytes;
  if (!single.SerializeToString(&bytes)) {
    return Status::Internal(path.string() + ": cannot serialize node '" + node.name() + "'");
  }
  return bytes;
}

}  // namespace

Result<std::string> SingleNodeModel(std::string_view model_bytes, size_t node_index,
                                    const TensorMap& feeds, const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, path));
  return CutNode(model, node_index, feeds, path);
}

Result<NodeModelCutter> NodeModelCutter::Open(const std::filesystem::path& path) {
  int64_t size = 0;
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProtoFile(path, &size));
  NodeModelCutter cutter;
  cutter.model_ = std::make_shared<const onnx::ModelProto>(std::move(model));
  cutter.path_ = path;
  return cutter;
}

Result<std::string> NodeModelCutter::Cut(size_t node_index, const TensorMap& feeds) const {
  return CutNode(*model_, node_index, feeds, path_);
}

namespace {

void FixInputShapes(const std::map<std::string, std::vector<int64_t>>& input_shapes,
                    onnx::GraphProto& graph) {
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) {
    auto found = input_shapes.find(input.name());
    if (found == input_shapes.end() || !input.type().has_tensor_type()) continue;
    onnx::TensorShapeProto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t dim : found->second) shape->add_dim()->set_dim_value(dim);
  }
}

// Bytes of a fully known tensor type; -1 when a dim or the element size is unknown.
int64_t TypeBytes(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return -1;
  const int bits = OnnxElemTypeBits(type.tensor_type().elem_type());
  if (bits == 0) return -1;
  int64_t elements = 1;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) return -1;
    elements *= dim.dim_value();
  }
  return (elements * bits + 7) / 8;
}

}  // namespace

Result<std::map<std::string, int64_t>> InferValueBytes(
    std::string_view model_bytes, const std::map<std::string, std::vector<int64_t>>& input_shapes,
    const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, path));
  FixInputShapes(input_shapes, *model.mutable_graph());
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception&) {
    // Best effort: whatever value_info the model declares (or inference added) still sizes.
  }
  std::map<std::string, int64_t> sizes;
  auto record = [&](const onnx::ValueInfoProto& info) {
    const int64_t bytes = TypeBytes(info.type());
    if (bytes >= 0) sizes[info.name()] = bytes;
  };
  for (const auto& info : model.graph().value_info()) record(info);
  for (const auto& info : model.graph().output()) record(info);
  return sizes;
}

}  // namespace convgate::graph
