// eliminate_identity: Identity nodes, and Dropout nodes in inference (no training_mode, or a
// constant false one; the mask output unused), are removed and their readers read the input
// directly. Graph outputs keep their names: when the removed node produced one, the node
// producing its input is renamed to produce the graph output instead (and when that input is a
// graph input, an initializer or another graph output, the node stays). Every candidate left alone
// is recorded with the reason. Exact: these nodes copy.
#include <optional>
#include <unordered_set>

#include "transform/constants.h"
#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

// Why a Dropout is not an inference-mode copy; empty when it is.
std::string DropoutSkip(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                        const std::unordered_map<std::string, int>& uses, std::string& detail) {
  const std::string reason = "it is in training mode or its mask is read";
  if (node.output_size() > 1 && !node.output(1).empty() && uses.count(node.output(1)) != 0) {
    detail = "mask '" + node.output(1) + "' is read";
    return reason;
  }
  if (node.input_size() < 3 || node.input(2).empty()) return "";
  std::string why_not;
  Result<std::optional<Tensor>> training = ReadConstant(graph, node.input(2), &why_not);
  if (!training.ok() || !*training) {
    detail = training.ok() ? why_not : training.status().message();
    return reason;
  }
  if ((*training)->num_elements() != 1 || (*training)->GetDouble(0) != 0.0) {
    detail = "training_mode '" + node.input(2) + "' is not false";
    return reason;
  }
  return "";
}

bool IsCandidate(const onnx::NodeProto& node) {
  return (node.op_type() == "Identity" || node.op_type() == "Dropout") && node.domain().empty() &&
         node.input_size() >= 1 && !node.input(0).empty() && node.output_size() >= 1;
}

class EliminateIdentity : public Pass {
 public:
  Status Apply(onnx::ModelProto& model, PassContext& context) override {
    onnx::GraphProto& graph = *model.mutable_graph();
    const std::unordered_map<std::string, int> uses = UseCounts(graph);
    std::unordered_set<int> removed;
    context.Expect("Identity");
    context.Expect("Dropout");
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      if (!IsCandidate(graph.node(idx))) continue;
      const onnx::NodeProto node = graph.node(idx);  // a copy: the rewiring edits the graph
      context.Candidate(node.op_type());
      std::string detail;
      const std::string skip =
          node.op_type() == "Dropout" ? DropoutSkip(graph, node, uses, detail) : "";
      if (!skip.empty()) {
        context.Skipped(node.op_type(), node, skip, detail);
        continue;
      }
      const bool done = IsGraphOutput(graph, node.output(0))
                            ? RenameProducerOutput(graph, idx, removed, context)
                            : Bypass(graph, idx, context);
      if (!done) {
        context.Skipped(node.op_type(), node,
                        "it copies a graph input, an initializer or a graph output into a graph "
                        "output, whose name must stay",
                        "'" + node.input(0) + "' -> '" + node.output(0) + "'");
        continue;
      }
      removed.insert(idx);
      context.Removed(node, "removed; readers of '" + node.output(0) + "' rewired");
    }
    EraseNodes(graph, removed);
    return Status::OK();
  }

 private:
  // Readers of the output read the input instead.
  static bool Bypass(onnx::GraphProto& graph, int idx, PassContext& context) {
    const std::string from = graph.node(idx).output(0);
    const std::string to = graph.node(idx).input(0);
    const std::string why =
        " (" + graph.node(idx).op_type() + " '" + NodeLabel(graph.node(idx)) + "' removed)";
    for (int reader : ReplaceUses(graph, from, to)) {
      context.Changed(*graph.mutable_node(reader), "input '" + from + "' -> '" + to + "'" + why);
    }
    return true;
  }

  // The output is a graph output: the input's producer takes over the output's name.
  static bool RenameProducerOutput(onnx::GraphProto& graph, int idx,
                                   const std::unordered_set<int>& removed, PassContext& context) {
    const std::string input = graph.node(idx).input(0);
    const std::string output = graph.node(idx).output(0);
    if (IsGraphOutput(graph, input)) return false;
    for (int producer = 0; producer < idx; ++producer) {
      if (removed.count(producer) != 0) continue;
      onnx::NodeProto& node = *graph.mutable_node(producer);
      for (std::string& produced : *node.mutable_output()) {
        if (produced != input) continue;
        NameIfUnnamed(node);
        produced = output;
        context.Changed(node, "output '" + input + "' renamed '" + output + "' (graph output of " +
                                  graph.node(idx).op_type() + " '" + NodeLabel(graph.node(idx)) +
                                  "', removed)");
        for (int reader : ReplaceUses(graph, input, output)) {
          if (reader == idx) continue;
          context.Changed(*graph.mutable_node(reader), "input '" + input + "' -> '" + output + "'");
        }
        return true;
      }
    }
    return false;  // a graph input or an initializer: the copy is the only node producing it
  }
};

}  // namespace

Result<std::unique_ptr<Pass>> MakeEliminateIdentity(const Params&) {
  return std::unique_ptr<Pass>(new EliminateIdentity());
}

}  // namespace convgate::transform
