#include "transform/graph_edit.h"

#include <onnx/shape_inference/implementation.h>

#include <exception>

#include "convgate/graph/internal/external_data.h"
#include "convgate/io/tensor_proto.h"

namespace convgate::transform {
namespace {

// Calls `visit` on every node of `graph` and of the subgraphs in its attributes.
void ForEachNodeDeep(const onnx::GraphProto& graph,
                     const std::function<void(const onnx::NodeProto&)>& visit) {
  for (const onnx::NodeProto& node : graph.node()) {
    visit(node);
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) ForEachNodeDeep(attr.g(), visit);
      for (const onnx::GraphProto& sub : attr.graphs()) ForEachNodeDeep(sub, visit);
    }
  }
}

bool ReplaceInGraph(onnx::GraphProto& graph, const std::string& from, const std::string& to);

bool ReplaceInNode(onnx::NodeProto& node, const std::string& from, const std::string& to) {
  bool changed = false;
  for (std::string& input : *node.mutable_input()) {
    if (input == from) {
      input = to;
      changed = true;
    }
  }
  for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
    if (attr.has_g()) changed |= ReplaceInGraph(*attr.mutable_g(), from, to);
    for (onnx::GraphProto& sub : *attr.mutable_graphs()) changed |= ReplaceInGraph(sub, from, to);
  }
  return changed;
}

// Inside a body, a value of the body's own shadows the outer one: stop there.
bool ReplaceInGraph(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (input.name() == from) return false;
  }
  bool changed = false;
  for (onnx::NodeProto& node : *graph.mutable_node()) changed |= ReplaceInNode(node, from, to);
  for (onnx::ValueInfoProto& output : *graph.mutable_output()) {
    if (output.name() == from) {
      output.set_name(to);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (input.name() == name) return nullptr;
  }
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (init.name() == name) return &init;
  }
  return nullptr;
}

Result<Tensor> ToTensor(const onnx::TensorProto& proto, const std::string& name) {
  const std::string what = "tensor '" + (name.empty() ? proto.name() : name) + "'";
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    // Anchored when the model was loaded (transform.cc): read from its data file now.
    onnx::TensorProto loaded = proto;
    Status read = graph::LoadExternalData(loaded);
    if (!read.ok()) return read.WithContext(what);
    CONVGATE_ASSIGN_OR_RETURN(io::NamedTensorProto named,
                              io::ParseTensorProto(loaded.SerializeAsString(), what));
    return std::move(named.tensor);
  }
  CONVGATE_ASSIGN_OR_RETURN(io::NamedTensorProto named,
                            io::ParseTensorProto(proto.SerializeAsString(), what));
  return std::move(named.tensor);
}

Result<onnx::TensorProto> ToProto(const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(io::SerializeTensorProto(tensor, name))) {
    return Status::Internal("cannot build the TensorProto for '" + name + "'");
  }
  return proto;
}

std::unordered_map<std::string, int> UseCounts(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, int> counts;
  ForEachNodeDeep(graph, [&](const onnx::NodeProto& node) {
    for (const std::string& input : node.input()) ++counts[input];
  });
  for (const onnx::ValueInfoProto& output : graph.output()) ++counts[output.name()];
  return counts;
}

bool IsGraphOutput(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (output.name() == name) return true;
  }
  return false;
}

std::unordered_map<std::string, int> Producers(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, int> producers;
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    for (const std::string& output : graph.node(idx).output()) {
      if (!output.empty()) producers[output] = idx;
    }
  }
  return producers;
}

UniqueNames::UniqueNames(const onnx::GraphProto& graph) {
  for (const onnx::ValueInfoProto& value : graph.input()) taken_.insert(value.name());
  for (const onnx::ValueInfoProto& value : graph.output()) taken_.insert(value.name());
  for (const onnx::TensorProto& init : graph.initializer()) taken_.insert(init.name());
  ForEachNodeDeep(graph, [&](const onnx::NodeProto& node) {
    taken_.insert(node.name());
    for (const std::string& output : node.output()) taken_.insert(output);
    for (const std::string& input : node.input()) taken_.insert(input);
  });
}

std::string UniqueNames::Make(const std::string& base) {
  std::string name = base;
  for (int suffix = 1; taken_.count(name) != 0; ++suffix) {
    name = base + "_" + std::to_string(suffix);
  }
  taken_.insert(name);
  return name;
}

void EraseNodes(onnx::GraphProto& graph, const std::unordered_set<int>& remove) {
  if (remove.empty()) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    if (remove.count(idx) == 0) *kept.Add() = std::move(*graph.mutable_node(idx));
  }
  graph.mutable_node()->Swap(&kept);
}

void RemoveUnusedInitializers(onnx::GraphProto& graph) {
  std::unordered_map<std::string, int> uses = UseCounts(graph);
  for (const onnx::ValueInfoProto& input : graph.input()) ++uses[input.name()];
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (onnx::TensorProto& init : *graph.mutable_initializer()) {
    if (uses.count(init.name()) != 0) *kept.Add() = std::move(init);
  }
  graph.mutable_initializer()->Swap(&kept);
}

std::vector<int> ReplaceUses(onnx::GraphProto& graph, const std::string& from,
                             const std::string& to) {
  std::vector<int> changed;
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    if (ReplaceInNode(*graph.mutable_node(idx), from, to)) changed.push_back(idx);
  }
  return changed;
}

std::unordered_map<std::string, int> KnownRanks(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception&) {
    return {};  // callers treat unknown ranks as "leave the node alone"
  }
  std::unordered_map<std::string, int> ranks;
  auto add = [&](const onnx::ValueInfoProto& value) {
    if (value.type().has_tensor_type() && value.type().tensor_type().has_shape()) {
      ranks[value.name()] = value.type().tensor_type().shape().dim_size();
    }
  };
  for (const onnx::ValueInfoProto& value : copy.graph().input()) add(value);
  for (const onnx::ValueInfoProto& value : copy.graph().value_info()) add(value);
  for (const onnx::ValueInfoProto& value : copy.graph().output()) add(value);
  for (const onnx::TensorProto& init : copy.graph().initializer()) {
    ranks.emplace(init.name(), init.dims_size());
  }
  return ranks;
}

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return 0;
}

bool IsFloatElemType(int32_t elem_type) {
  return elem_type == onnx::TensorProto::FLOAT || elem_type == onnx::TensorProto::DOUBLE ||
         elem_type == onnx::TensorProto::FLOAT16 || elem_type == onnx::TensorProto::BFLOAT16;
}

}  // namespace convgate::transform
