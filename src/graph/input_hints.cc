#include "graph/input_hints.h"

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/onnx_types.h"

namespace convgate::graph {
namespace {

// A constant's dims, from an initializer or a Constant node's 'value'.
using ConstantDims = std::map<std::string, std::vector<int64_t>>;

ConstantDims ReadConstantDims(const onnx::GraphProto& graph) {
  ConstantDims dims;
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    dims[tensor.name()].assign(tensor.dims().begin(), tensor.dims().end());
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1) continue;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.name() == "value" && attribute.has_t()) {
        dims[node.output(0)].assign(attribute.t().dims().begin(), attribute.t().dims().end());
      }
    }
  }
  return dims;
}

struct Use {
  const onnx::NodeProto* node;
  int input;  // which of the node's inputs the value is
};
using Consumers = std::map<std::string, std::vector<Use>>;

Consumers ReadConsumers(const onnx::GraphProto& graph) {
  Consumers consumers;
  for (const onnx::NodeProto& node : graph.node()) {
    for (int k = 0; k < node.input_size(); ++k) {
      if (!node.input(k).empty()) consumers[node.input(k)].push_back(Use{&node, k});
    }
  }
  return consumers;
}

int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name && attribute.type() == onnx::AttributeProto::INT) {
      return attribute.i();
    }
  }
  return fallback;
}

std::string NodeName(const onnx::NodeProto& node) {
  return node.op_type() + " '" + (node.name().empty() ? node.output(0) : node.name()) + "'";
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t k = 0; k < dims.size(); ++k) text += (k ? ", " : "") + std::to_string(dims[k]);
  return text + "]";
}

// The uses of `value` and of what the pass-through ops `through` make of it, breadth first, a
// few steps deep (ids reach their embedding after a Reshape or a Cast, not after a network).
std::vector<Use> ReachedUses(const std::string& value, const Consumers& consumers,
                             const std::set<std::string>& through) {
  constexpr int kMaxDepth = 4;
  std::vector<Use> reached;
  std::vector<std::string> frontier = {value};
  std::set<std::string> seen = {value};
  for (int depth = 0; depth < kMaxDepth && !frontier.empty(); ++depth) {
    std::vector<std::string> next;
    for (const std::string& name : frontier) {
      auto it = consumers.find(name);
      if (it == consumers.end()) continue;
      for (const Use& use : it->second) {
        reached.push_back(use);
        const onnx::NodeProto& node = *use.node;
        if (use.input != 0 || !IsDefaultDomain(node) || !through.contains(node.op_type())) continue;
        for (const std::string& output : node.output()) {
          if (seen.insert(output).second) next.push_back(output);
        }
      }
    }
    frontier = std::move(next);
  }
  return reached;
}

void HintIndexRows(TensorInfo& input, const Consumers& consumers, const ConstantDims& constants) {
  static const std::set<std::string> kThrough = {"Cast",    "Reshape", "Unsqueeze",
                                                 "Squeeze", "Flatten", "Identity"};
  for (const Use& use : ReachedUses(input.name, consumers, kThrough)) {
    const onnx::NodeProto& node = *use.node;
    if (node.op_type() != "Gather" || !IsDefaultDomain(node) || use.input != 1) continue;
    if (IntAttribute(node, "axis", 0) != 0) continue;
    auto table = constants.find(node.input(0));
    if (table == constants.end() || table->second.size() < 2 || table->second[0] < 1) continue;
    // The smallest table wins: an input indexing two tables must fit both.
    if (input.hint.index_rows == 0 || table->second[0] < input.hint.index_rows) {
      input.hint.index_rows = table->second[0];
      input.hint.index_source = NodeName(node) + " on '" + node.input(0) + "' (" +
                                std::to_string(table->second[0]) + " rows)";
    }
  }
}

void HintChannels(TensorInfo& input, const Consumers& consumers, const ConstantDims& constants) {
  if (!input.has_shape || input.shape.size() != 4 || input.shape[1].is_fixed()) return;
  static const std::set<std::string> kThrough = {"Cast", "Identity"};
  for (const Use& use : ReachedUses(input.name, consumers, kThrough)) {
    const onnx::NodeProto& node = *use.node;
    if (node.op_type() != "Conv" || !IsDefaultDomain(node) || use.input != 0) continue;
    if (node.input_size() < 2) continue;
    auto weight = constants.find(node.input(1));
    if (weight == constants.end() || weight->second.size() != 4 || weight->second[1] < 1) continue;
    input.hint.channels = weight->second[1] * IntAttribute(node, "group", 1);
    input.hint.channels_source =
        NodeName(node) + " (weight '" + node.input(1) + "' " + DimsText(weight->second) + ")";
    return;
  }
}

}  // namespace

void AddInputHints(const onnx::GraphProto& graph, Signature& signature) {
  const ConstantDims constants = ReadConstantDims(graph);
  const Consumers consumers = ReadConsumers(graph);
  for (TensorInfo& input : signature.inputs) {
    if (!input.dtype) continue;
    if (IsInteger(*input.dtype) || *input.dtype == DType::kBool) {
      std::string lower = input.name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      input.hint.mask = lower.find("mask") != std::string::npos;
    }
    if (IsInteger(*input.dtype) && !input.hint.mask) HintIndexRows(input, consumers, constants);
    if (IsFloating(*input.dtype)) HintChannels(input, consumers, constants);
  }
}

}  // namespace convgate::graph
