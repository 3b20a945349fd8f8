#include "convgate/graph/internal/bfloat16_emulation.h"

#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <exception>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "convgate/core/float16.h"
#include "convgate/graph/internal/cast_node.h"
#include "graph/onnx_types.h"

namespace convgate::graph {
namespace {

using onnx::TensorProto;

// Ops that only move or select values: a bfloat16 value in is a bfloat16 value out, so their
// outputs need no rounding.
const std::set<std::string>& MovesOnly() {
  static const std::set<std::string> kOps = {
      "Identity", "Reshape", "Transpose", "Squeeze",      "Unsqueeze",      "Flatten",
      "Concat",   "Split",   "Slice",     "Gather",       "GatherElements", "GatherND",
      "Expand",   "Tile",    "Pad",       "DepthToSpace", "SpaceToDepth",   "MaxPool",
      "Relu",     "Max",     "Min",       "Where",        "ReduceMax",      "ReduceMin",
      "Abs",      "Neg"};
  return kOps;
}

bool HasBfloat16Subgraph(const onnx::GraphProto& graph);

}  // namespace

bool UsesBfloat16(const onnx::GraphProto& graph) {
  for (const TensorProto& tensor : graph.initializer()) {
    if (tensor.data_type() == TensorProto::BFLOAT16) return true;
  }
  for (const auto* values : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const onnx::ValueInfoProto& value : *values) {
      if (value.type().tensor_type().elem_type() == TensorProto::BFLOAT16) return true;
    }
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.i() == TensorProto::BFLOAT16 && attribute.type() == onnx::AttributeProto::INT &&
          (attribute.name() == "to" || attribute.name() == "dtype")) {
        return true;
      }
    }
  }
  return HasBfloat16Subgraph(graph);
}

namespace {

bool HasBfloat16Subgraph(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g() && UsesBfloat16(attribute.g())) return true;
      for (const onnx::GraphProto& body : attribute.graphs()) {
        if (UsesBfloat16(body)) return true;
      }
    }
  }
  return false;
}

// bfloat16 is float32's upper half: widening is exact.
Status Widen(TensorProto& tensor, const std::string& what) {
  if (tensor.data_type() != TensorProto::BFLOAT16) return Status::OK();
  if (tensor.data_location() == TensorProto::EXTERNAL) {
    return Status::Unimplemented(what +
                                 " is bfloat16 external data, which the bfloat16 "
                                 "emulation does not read");
  }
  std::vector<uint16_t> bits;
  if (tensor.has_raw_data()) {
    bits.resize(tensor.raw_data().size() / 2);
    std::memcpy(bits.data(), tensor.raw_data().data(), bits.size() * 2);
  } else {
    for (int32_t value : tensor.int32_data()) bits.push_back(static_cast<uint16_t>(value));
  }
  std::string raw(bits.size() * 4, '\0');
  for (size_t idx = 0; idx < bits.size(); ++idx) {
    const float value = BFloat16ToFloat(bits[idx]);
    std::memcpy(raw.data() + idx * 4, &value, 4);
  }
  tensor.clear_int32_data();
  tensor.set_raw_data(std::move(raw));
  tensor.set_data_type(TensorProto::FLOAT);
  return Status::OK();
}

onnx::NodeProto Cast(const std::string& input, const std::string& output, int to) {
  return MakeCast(input, output, to, output + "/bf16_emulation");
}

// Records the element type of every value of `graph` and of its If/Loop/Scan bodies that a
// declaration (or shape inference, which types bodies too) gives.
void AddValueTypes(const onnx::GraphProto& graph, std::unordered_map<std::string, int>& types) {
  for (const auto* values : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const onnx::ValueInfoProto& value : *values) {
      if (value.type().has_tensor_type())
        types[value.name()] = value.type().tensor_type().elem_type();
    }
  }
  for (const TensorProto& tensor : graph.initializer()) types[tensor.name()] = tensor.data_type();
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) AddValueTypes(attribute.g(), types);
      for (const onnx::GraphProto& body : attribute.graphs()) AddValueTypes(body, types);
    }
  }
}

// The element type of every value, bodies included, that shape inference or a declaration types.
// Value names are unique across a model's scopes in the exporters seen (a body shadowing an outer
// name would share its type here).
std::unordered_map<std::string, int> ValueTypes(const onnx::ModelProto& model) {
  onnx::ModelProto inferred = model;
  try {
    onnx::shape_inference::InferShapes(inferred);
  } catch (const std::exception&) {
    // Declared types only.
  }
  std::unordered_map<std::string, int> types;
  AddValueTypes(inferred.graph(), types);
  return types;
}

// Every value name of `graph` and its bodies, so the names the emulation adds are new.
void AddNames(const onnx::GraphProto& graph, std::unordered_set<std::string>& taken) {
  for (const TensorProto& tensor : graph.initializer()) taken.insert(tensor.name());
  for (const onnx::ValueInfoProto& input : graph.input()) taken.insert(input.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) taken.insert(output);
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) AddNames(attribute.g(), taken);
      for (const onnx::GraphProto& body : attribute.graphs()) AddNames(body, taken);
    }
  }
}

void RetypeAttributes(onnx::NodeProto& node) {
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (attribute.type() == onnx::AttributeProto::INT && attribute.i() == TensorProto::BFLOAT16 &&
        (attribute.name() == "to" || attribute.name() == "dtype")) {
      attribute.set_i(TensorProto::FLOAT);
    }
  }
}

class Emulator {
 public:
  Emulator(onnx::ModelProto& model, const std::filesystem::path& path)
      : model_(model), path_(path), types_(ValueTypes(model)) {
    for (const TensorProto& tensor : model.graph().initializer()) {
      initializers_.insert(tensor.name());
    }
    AddNames(model.graph(), taken_);
  }

  Result<Bfloat16Emulation> Run() {
    onnx::GraphProto& graph = *model_.mutable_graph();
    CONVGATE_RETURN_IF_ERROR(WidenInitializers(graph));
    std::unordered_set<std::string> outputs;
    for (const onnx::ValueInfoProto& output : graph.output()) {
      if (IsBf16(output.name())) outputs.insert(output.name());
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(graph.mutable_node());
    // bfloat16 graph inputs enter as float32 under a new name.
    for (const onnx::ValueInfoProto& input : graph.input()) {
      if (!IsBf16(input.name()) || initializers_.count(input.name()) > 0) continue;
      const std::string widened = Unique(input.name() + "/float32");
      renames_[input.name()] = widened;
      *graph.add_node() = Cast(input.name(), widened, TensorProto::FLOAT);
    }
    for (onnx::NodeProto& node : nodes) {
      CONVGATE_RETURN_IF_ERROR(Rewrite(node, outputs, graph));
    }
    graph.clear_value_info();  // float32 now where it said bfloat16; ONNX Runtime infers them
    return result_;
  }

 private:
  bool IsBf16(const std::string& name) const {
    auto found = types_.find(name);
    return found != types_.end() && found->second == TensorProto::BFLOAT16;
  }
  std::string Unique(const std::string& base) {
    std::string name = base;
    for (int suffix = 1; taken_.count(name) > 0; ++suffix)
      name = base + "_" + std::to_string(suffix);
    taken_.insert(name);
    return name;
  }

  Status WidenInitializers(onnx::GraphProto& graph) {
    for (TensorProto& tensor : *graph.mutable_initializer()) {
      if (tensor.data_type() == TensorProto::BFLOAT16) ++result_.widened_initializers;
      CONVGATE_RETURN_IF_ERROR(Widen(tensor, "initializer '" + tensor.name() + "'"));
    }
    return Status::OK();
  }

  // An If/Loop/Scan body computes in float32 like the main graph: its bfloat16 inputs and outputs
  // (a Loop's carried state, the branches' results) become float32, every bfloat16 value its nodes
  // compute is rounded as stored, and its outputs too (a body's outputs are no interface: the
  // node's outputs in the outer graph are rounded again, or cast back where they leave the model).
  Status RewriteBody(onnx::GraphProto& body) {
    CONVGATE_RETURN_IF_ERROR(WidenInitializers(body));
    for (auto* values : {body.mutable_input(), body.mutable_output()}) {
      for (onnx::ValueInfoProto& value : *values) {
        if (!value.type().has_tensor_type()) continue;  // untyped: left for the runtime to infer
        onnx::TypeProto::Tensor* type = value.mutable_type()->mutable_tensor_type();
        if (type->elem_type() == TensorProto::BFLOAT16) type->set_elem_type(TensorProto::FLOAT);
      }
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(body.mutable_node());
    for (onnx::NodeProto& node : nodes) CONVGATE_RETURN_IF_ERROR(Rewrite(node, {}, body));
    body.clear_value_info();
    return Status::OK();
  }

  Status Rewrite(onnx::NodeProto& node, const std::unordered_set<std::string>& graph_outputs,
                 onnx::GraphProto& graph) {
    for (std::string& input : *node.mutable_input()) {
      if (auto found = renames_.find(input); found != renames_.end()) input = found->second;
    }
    RetypeAttributes(node);
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) {
        CONVGATE_RETURN_IF_ERROR(Widen(*attribute.mutable_t(), node.op_type() + " attribute"));
      }
      if (attribute.has_g()) CONVGATE_RETURN_IF_ERROR(RewriteBody(*attribute.mutable_g()));
      for (onnx::GraphProto& body : *attribute.mutable_graphs()) {
        CONVGATE_RETURN_IF_ERROR(RewriteBody(body));
      }
    }
    const bool moves_only = MovesOnly().count(node.op_type()) > 0;
    std::vector<onnx::NodeProto> after;
    for (std::string& output : *node.mutable_output()) {
      if (output.empty() || !IsBf16(output)) continue;
      const bool leaves = graph_outputs.count(output) > 0;
      if (moves_only && !leaves) continue;
      const std::string computed = Unique(output + "/float32");
      const std::string original = output;
      output = computed;
      if (leaves) {  // the interface keeps bfloat16
        after.push_back(Cast(computed, original, TensorProto::BFLOAT16));
        continue;
      }
      const std::string stored = Unique(original + "/bfloat16");
      after.push_back(Cast(computed, stored, TensorProto::BFLOAT16));
      after.push_back(Cast(stored, original, TensorProto::FLOAT));
      ++result_.rounded_values;
    }
    // A moved value that is a graph output: its input is float32 now, cast on the way out.
    *graph.add_node() = std::move(node);
    for (onnx::NodeProto& cast : after) *graph.add_node() = std::move(cast);
    return Status::OK();
  }

  onnx::ModelProto& model_;
  const std::filesystem::path& path_;
  std::unordered_map<std::string, int> types_;
  std::unordered_set<std::string> taken_;
  std::unordered_set<std::string> initializers_;
  std::unordered_map<std::string, std::string> renames_;
  Bfloat16Emulation result_;
};

}  // namespace

Result<Bfloat16Emulation> EmulateBfloat16(onnx::ModelProto& model,
                                          const std::filesystem::path& path) {
  if (!UsesBfloat16(model.graph())) return Bfloat16Emulation{};
  return Emulator(model, path).Run();
}

}  // namespace convgate::graph
