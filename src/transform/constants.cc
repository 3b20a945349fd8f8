#include "transform/constants.h"

#include <unordered_set>

#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

std::string Quoted(const std::string& name) { return "'" + name + "'"; }

int ProducerIndex(const onnx::GraphProto& graph, const std::string& name) {
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    for (const std::string& output : graph.node(idx).output()) {
      if (output == name) return idx;
    }
  }
  return -1;
}

bool HasInitializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (init.name() == name) return true;
  }
  return false;
}

bool IsPlain(const onnx::NodeProto& node, const char* op) {
  return node.op_type() == op && (node.domain().empty() || node.domain() == "ai.onnx");
}

// A Constant node's tensor from whichever attribute holds it; `why_not` says what it holds
// instead when it is none this reader takes.
void ReadConstantNode(const onnx::NodeProto& node, const std::string& name,
                      ConstantLookup& lookup) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == "value" && attr.has_t()) {
      lookup.borrowed = &attr.t();
      return;
    }
    onnx::TensorProto built;
    if (attr.name() == "value_float") {
      built.set_data_type(onnx::TensorProto::FLOAT);
      built.add_float_data(attr.f());
    } else if (attr.name() == "value_floats") {
      built.set_data_type(onnx::TensorProto::FLOAT);
      built.add_dims(attr.floats_size());
      *built.mutable_float_data() = attr.floats();
    } else if (attr.name() == "value_int") {
      built.set_data_type(onnx::TensorProto::INT64);
      built.add_int64_data(attr.i());
    } else if (attr.name() == "value_ints") {
      built.set_data_type(onnx::TensorProto::INT64);
      built.add_dims(attr.ints_size());
      *built.mutable_int64_data() = attr.ints();
    } else {
      continue;
    }
    built.set_name(name);
    lookup.owned = std::move(built);
    return;
  }
  std::string held;
  for (const onnx::AttributeProto& attr : node.attribute()) {
    held += (held.empty() ? "" : ", ") + attr.name();
  }
  lookup.why_not = "is computed by Constant " + Quoted(NodeLabel(node)) + " from " +
                   (held.empty() ? "no attribute" : held) + ", which passes do not read";
}

// Sets the tensor of `name` in `lookup`, or its `why_not` as a predicate ("is a graph input")
// that LookUpConstant puts the value's name before.
void LookUp(const onnx::GraphProto& graph, const std::string& name, int depth,
            ConstantLookup& lookup) {
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (input.name() != name) continue;
    lookup.why_not = HasInitializer(graph, name)
                         ? "is an initializer that the graph input of the same name may override"
                         : "is a graph input";
    return;
  }
  if (const onnx::TensorProto* init = FindInitializer(graph, name)) {
    lookup.borrowed = init;
    return;
  }
  const int producer = ProducerIndex(graph, name);
  if (producer < 0) {
    lookup.why_not = "is produced by no node of the main graph";
    return;
  }
  const onnx::NodeProto& node = graph.node(producer);
  if (IsPlain(node, "Constant")) {
    lookup.nodes.push_back(producer);
    ReadConstantNode(node, name, lookup);
    return;
  }
  // Bounded by the node count: a (malformed) cycle of Identity nodes must not recurse forever.
  if (IsPlain(node, "Identity") && node.input_size() == 1 && !node.input(0).empty() &&
      depth < graph.node_size()) {
    lookup.nodes.push_back(producer);
    LookUp(graph, node.input(0), depth + 1, lookup);
    if (!lookup) {
      lookup.why_not = "comes through Identity " + Quoted(NodeLabel(node)) + " from " +
                       Quoted(node.input(0)) + ", which " + lookup.why_not;
    }
    return;
  }
  lookup.why_not = "is computed by " + node.op_type() + " " + Quoted(NodeLabel(node));
}

// Constant nodes and Identity nodes over constants that nothing reads.
std::unordered_set<int> UnreadConstantNodes(const onnx::GraphProto& graph) {
  const std::unordered_map<std::string, int> uses = UseCounts(graph);
  std::unordered_set<int> unread;
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    const onnx::NodeProto& node = graph.node(idx);
    if (node.output_size() != 1 || uses.count(node.output(0)) != 0) continue;
    const bool constant = IsPlain(node, "Constant");
    const bool identity =
        IsPlain(node, "Identity") && node.input_size() == 1 && LookUpConstant(graph, node.input(0));
    if (constant || identity) unread.insert(idx);
  }
  return unread;
}

}  // namespace

ConstantLookup LookUpConstant(const onnx::GraphProto& graph, const std::string& name) {
  ConstantLookup lookup;
  if (name.empty()) {
    lookup.why_not = "the input is omitted";
    return lookup;
  }
  LookUp(graph, name, 0, lookup);
  lookup.why_not = lookup ? "" : Quoted(name) + " " + lookup.why_not;
  return lookup;
}

Result<std::optional<Tensor>> ReadConstant(const onnx::GraphProto& graph, const std::string& name,
                                           std::string* why_not) {
  const ConstantLookup lookup = LookUpConstant(graph, name);
  if (!lookup) {
    if (why_not != nullptr) *why_not = lookup.why_not;
    return std::optional<Tensor>();
  }
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, ToTensor(*lookup.proto(), name));
  return std::optional<Tensor>(std::move(tensor));
}

std::vector<onnx::NodeProto> EraseUnreadConstants(onnx::GraphProto& graph) {
  std::vector<onnx::NodeProto> removed;
  for (std::unordered_set<int> unread = UnreadConstantNodes(graph); !unread.empty();
       unread = UnreadConstantNodes(graph)) {
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      if (unread.count(idx) != 0) removed.push_back(graph.node(idx));
    }
    EraseNodes(graph, unread);
  }
  return removed;
}

}  // namespace convgate::transform
