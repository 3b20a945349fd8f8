// SingleNodeModel and InferValueBytes: one node cut out of a graph, and the sizes of its values.
#include "convgate/graph/node_model.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/shape_inference/implementation.h>

#include <optional>
#include <set>
#include <utility>
#include <vector>

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

// Adds the node's inputs that `added` does not hold yet (and records them there); inputs in
// `internal` are produced by another node of the cut.
Status AddNodeInputs(const onnx::GraphProto& source, const onnx::NodeProto& node,
                     const TensorMap& feeds, const std::set<std::string>& internal,
                     const std::filesystem::path& path, onnx::GraphProto& graph,
                     std::set<std::string>& added) {
  for (const std::string& name : node.input()) {
    if (name.empty() || internal.count(name) != 0 || !added.insert(name).second) continue;
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

// A copy of `model` for shape inference, without the values of its floating initializers over
// 1 KiB (weights): inference reads the values only of the small tensors that shape other values
// (Reshape's shape, Slice's starts, Resize's scales), so typing a cut's outputs need not copy its
// weights. The data is moved out of `model` and back, never copied.
onnx::ModelProto WithoutWeights(onnx::ModelProto& model) {
  constexpr size_t kWeightBytes = 1024;
  std::vector<std::pair<onnx::TensorProto*, std::string>> raw;
  std::vector<std::pair<onnx::TensorProto*, google::protobuf::RepeatedField<float>>> floats;
  for (onnx::TensorProto& tensor : *model.mutable_graph()->mutable_initializer()) {
    if (tensor.raw_data().size() > kWeightBytes) {
      raw.emplace_back(&tensor, std::move(*tensor.mutable_raw_data()));
      tensor.clear_raw_data();
    }
    if (tensor.float_data_size() * sizeof(float) > kWeightBytes) {
      floats.emplace_back(&tensor, google::protobuf::RepeatedField<float>());
      floats.back().second.Swap(tensor.mutable_float_data());
    }
  }
  onnx::ModelProto copy = model;
  for (auto& [tensor, data] : raw) *tensor->mutable_raw_data() = std::move(data);
  for (auto& [tensor, data] : floats) tensor->mutable_float_data()->Swap(&data);
  return copy;
}

// Runtimes want typed graph outputs: the types ONNX shape inference gives the cut model (its
// inputs are fully typed), else what the original graph declares for the value. `original_names`
// holds, for each graph output of `cut` in order, its name in `original` (side-by-side cuts
// rename them).
void TypeOutputs(const onnx::GraphProto& original, const std::vector<std::string>& original_names,
                 onnx::ModelProto& cut) {
  onnx::ModelProto inferred = WithoutWeights(cut);
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
  auto& outputs = *cut.mutable_graph()->mutable_output();
  for (int output_idx = 0; output_idx < outputs.size(); ++output_idx) {
    onnx::ValueInfoProto& output = outputs[output_idx];
    const std::string& original_name = original_names[static_cast<size_t>(output_idx)];
    const onnx::TypeProto* type = find_type(inferred.graph().value_info(), output.name());
    if (type == nullptr) type = find_type(inferred.graph().output(), output.name());
    if (type == nullptr) type = find_type(original.value_info(), original_name);
    if (type == nullptr) type = find_type(original.output(), original_name);
    if (type != nullptr) *output.mutable_type() = *type;
  }
}

// An empty model with `model`'s IR version, opsets and local functions.
onnx::ModelProto EmptyModelLike(const onnx::ModelProto& model, const std::string& graph_name) {
  onnx::ModelProto cut;
  cut.set_ir_version(model.ir_version());
  *cut.mutable_opset_import() = model.opset_import();
  *cut.mutable_functions() = model.functions();
  cut.set_producer_name("convgate per-node");
  cut.mutable_graph()->set_name(graph_name);
  return cut;
}

Status CheckUnit(const onnx::GraphProto& graph, const std::vector<size_t>& unit,
                 const std::filesystem::path& path) {
  if (unit.empty()) return Status::InvalidArgument(path.string() + ": no node to cut");
  for (size_t node_index : unit) {
    if (node_index >= static_cast<size_t>(graph.node_size())) {
      return Status::InvalidArgument(path.string() + ": no node " + std::to_string(node_index) +
                                     " (the graph has " + std::to_string(graph.node_size()) + ")");
    }
  }
  return Status::OK();
}

Result<std::string> Serialize(const onnx::ModelProto& model, const std::filesystem::path& path,
                              const std::string& what) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return Status::Internal(path.string() + ": cannot serialize " + what);
  }
  return bytes;
}

// The values the unit's nodes produce.
std::set<std::string> ProducedBy(const onnx::GraphProto& source, const std::vector<size_t>& unit) {
  std::set<std::string> produced;
  for (size_t node_index : unit) {
    for (const std::string& output : source.node(static_cast<int>(node_index)).output()) {
      if (!output.empty()) produced.insert(output);
    }
  }
  return produced;
}

Result<onnx::ModelProto> CutUnit(const onnx::ModelProto& model, const std::vector<size_t>& unit,
                                 const TensorMap& feeds, const std::filesystem::path& path) {
  const onnx::GraphProto& source = model.graph();
  CONVGATE_RETURN_IF_ERROR(CheckUnit(source, unit, path));
  onnx::ModelProto single = EmptyModelLike(model, "single_node");
  onnx::GraphProto& graph = *single.mutable_graph();
  const std::set<std::string> internal = ProducedBy(source, unit);
  std::set<std::string> added;
  std::vector<std::string> output_names;
  for (size_t node_index : unit) {
    const onnx::NodeProto& node = source.node(static_cast<int>(node_index));
    CONVGATE_RETURN_IF_ERROR(AddNodeInputs(source, node, feeds, internal, path, graph, added));
    *graph.add_node() = node;
    for (const std::string& output : node.output()) {
      if (output.empty()) continue;
      graph.add_output()->set_name(output);
      output_names.push_back(output);
    }
  }
  TypeOutputs(source, output_names, single);
  return single;
}

// Every value name of the main graph, so renamed outputs can be checked not to clash with one.
std::set<std::string> ValueNames(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::ValueInfoProto& input : graph.input()) names.insert(input.name());
  for (const onnx::TensorProto& initializer : graph.initializer()) names.insert(initializer.name());
  for (const onnx::NodeProto& node : graph.node()) {
    names.insert(node.input().begin(), node.input().end());
    names.insert(node.output().begin(), node.output().end());
  }
  return names;
}

Result<onnx::ModelProto> CutSideBySide(const onnx::ModelProto& model,
                                       const std::vector<std::vector<size_t>>& units,
                                       const TensorMap& feeds, const std::filesystem::path& path) {
  const onnx::GraphProto& source = model.graph();
  onnx::ModelProto cut = EmptyModelLike(model, "side_by_side");
  onnx::GraphProto& graph = *cut.mutable_graph();
  const std::set<std::string> taken = ValueNames(source);
  std::set<std::string> inputs_added;  // graph inputs and initializers, each once
  std::vector<std::string> original_names;
  for (size_t copy_idx = 0; copy_idx < units.size(); ++copy_idx) {
    CONVGATE_RETURN_IF_ERROR(CheckUnit(source, units[copy_idx], path));
    const std::set<std::string> internal = ProducedBy(source, units[copy_idx]);
    for (size_t node_index : units[copy_idx]) {
      const onnx::NodeProto& node = source.node(static_cast<int>(node_index));
      CONVGATE_RETURN_IF_ERROR(
          AddNodeInputs(source, node, feeds, internal, path, graph, inputs_added));
      onnx::NodeProto& copy = *graph.add_node() = node;
      copy.set_name(SideBySideOutputName(copy_idx, node.name()));
      for (std::string& input : *copy.mutable_input()) {
        if (internal.count(input) != 0) input = SideBySideOutputName(copy_idx, input);
      }
      for (std::string& output : *copy.mutable_output()) {
        if (output.empty()) continue;
        original_names.push_back(output);
        output = SideBySideOutputName(copy_idx, output);
        if (taken.count(output) != 0) {
          return Status::InvalidArgument(path.string() + ": cannot rename '" +
                                         original_names.back() + "' to '" + output +
                                         "', a value of the graph");
        }
        graph.add_output()->set_name(output);
      }
    }
  }
  TypeOutputs(source, original_names, cut);
  return cut;
}

// The data the cut's initializers were read without (NodeModelCutter reads the model's structure
// only), read back from the file or referenced in it (`weights_location`), then the cut
// serialized.
Result<std::string> RestoreAndSerialize(const ModelStructure& structure,
                                        const std::filesystem::path& path, onnx::ModelProto cut,
                                        const std::string& weights_location,
                                        const std::string& what) {
  const auto& all = structure.model.graph().initializer();
  for (onnx::TensorProto& initializer : *cut.mutable_graph()->mutable_initializer()) {
    if (structure.skipped.empty()) break;
    for (int idx = 0; idx < all.size(); ++idx) {
      if (all[idx].name() != initializer.name()) continue;  // the first, as FindInitializer
      const std::vector<SkippedTensorData>& skipped = structure.skipped[static_cast<size_t>(idx)];
      CONVGATE_RETURN_IF_ERROR(
          weights_location.empty()
              ? RestoreTensorData(path, skipped, initializer)
              : ReferenceTensorData(path, weights_location, skipped, initializer));
      break;
    }
  }
  return Serialize(cut, path, what);
}

}  // namespace

Result<std::string> SingleNodeModel(std::string_view model_bytes, size_t node_index,
                                    const TensorMap& feeds, const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, path));
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto cut, CutUnit(model, {node_index}, feeds, path));
  return Serialize(cut, path, "node '" + cut.graph().node(0).name() + "'");
}

Result<NodeModelCutter> NodeModelCutter::Open(const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(ModelStructure structure, ReadModelStructure(path));
  NodeModelCutter cutter;
  cutter.structure_ = std::make_shared<const ModelStructure>(std::move(structure));
  cutter.path_ = path;
  return cutter;
}

Result<std::string> NodeModelCutter::Cut(const std::vector<size_t>& unit, const TensorMap& feeds,
                                         const std::string& weights_location) const {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto cut, CutUnit(structure_->model, unit, feeds, path_));
  const std::string what = "node '" + cut.graph().node(cut.graph().node_size() - 1).name() + "'";
  return RestoreAndSerialize(*structure_, path_, std::move(cut), weights_location, what);
}

Result<std::string> NodeModelCutter::CutSideBySide(const std::vector<std::vector<size_t>>& units,
                                                   const TensorMap& feeds,
                                                   const std::string& weights_location) const {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto cut,
                            graph::CutSideBySide(structure_->model, units, feeds, path_));
  return RestoreAndSerialize(*structure_, path_, std::move(cut), weights_location,
                             "the side-by-side nodes");
}

int64_t NodeModelCutter::InitializerBytes(const std::vector<size_t>& unit) const {
  const onnx::GraphProto& graph = structure_->model.graph();
  std::set<std::string> inputs;
  for (size_t node_index : unit) {
    if (node_index >= static_cast<size_t>(graph.node_size())) return 0;
    for (const std::string& input : graph.node(static_cast<int>(node_index)).input()) {
      inputs.insert(input);
    }
  }
  int64_t bytes = 0;
  for (int idx = 0; idx < graph.initializer_size(); ++idx) {
    const onnx::TensorProto& initializer = graph.initializer(idx);
    if (inputs.count(initializer.name()) == 0) continue;
    bytes += static_cast<int64_t>(initializer.ByteSizeLong());
    if (structure_->skipped.empty()) continue;
    for (const SkippedTensorData& field : structure_->skipped[static_cast<size_t>(idx)]) {
      using google::protobuf::io::CodedOutputStream;
      bytes += CodedOutputStream::VarintSize32(field.tag) +
               CodedOutputStream::VarintSize32(field.length) + field.length;
    }
  }
  return bytes;
}

std::string SideBySideOutputName(size_t copy_index, const std::string& name) {
  return "convgate.side_by_side." + std::to_string(copy_index) + "." + name;
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
    const std::filesystem::path& path, std::map<std::string, DType>* dtypes) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, path));
  FixInputShapes(input_shapes, *model.mutable_graph());
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception&) {
    // Best effort: whatever value_info the model declares (or inference added) still sizes.
  }
  std::map<std::string, int64_t> sizes;
  auto record_dtype = [&](const onnx::ValueInfoProto& info) {
    if (dtypes == nullptr || !info.type().has_tensor_type()) return;
    if (std::optional<DType> dtype = DTypeFromOnnx(info.type().tensor_type().elem_type())) {
      (*dtypes)[info.name()] = *dtype;
    }
  };
  auto record = [&](const onnx::ValueInfoProto& info) {
    const int64_t bytes = TypeBytes(info.type());
    if (bytes >= 0) sizes[info.name()] = bytes;
    record_dtype(info);
  };
  for (const auto& info : model.graph().input()) record_dtype(info);
  for (const auto& info : model.graph().value_info()) record(info);
  for (const auto& info : model.graph().output()) record(info);
  return sizes;
}

}  // namespace convgate::graph
