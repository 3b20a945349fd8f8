// eliminate_identity: Identity nodes, and Dropout nodes in inference (no training_mode, or a
// constant false one; the mask output unused), are removed and their readers read the input
// directly. Graph outputs keep their names: when the removed node produced one, the node
// producing its input is renamed to produce the graph output instead (and when that input is a
// graph input, an initializer or another graph output, the node stays). Exact: these nodes copy.
#include <unordered_set>

#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

bool IsInferenceDropout(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                        const std::unordered_map<std::string, int>& uses) {
  if (node.op_type() != "Dropout" || !node.domain().empty()) return false;
  if (node.output_size() > 1 && !node.output(1).empty() && uses.count(node.output(1)) != 0) {
    return false;  // the mask is read
  }
  if (node.input_size() < 3 || node.input(2).empty()) return true;
  const onnx::TensorProto* training = FindConstant(graph, node.input(2));
  if (training == nullptr) return false;
  Result<Tensor> value = ToTensor(*training);
  return value.ok() && value->num_elements() == 1 && value->GetDouble(0) == 0.0;
}

bool IsCopy(const onnx::GraphProto& graph, const onnx::NodeProto& node,
            const std::unordered_map<std::string, int>& uses) {
  if (node.input_size() < 1 || node.input(0).empty() || node.output_size() < 1) return false;
  if (node.op_type() == "Identity" && node.domain().empty()) return true;
  return IsInferenceDropout(graph, node, uses);
}

class EliminateIdentity : public Pass {
 public:
  Status Apply(onnx::ModelProto& model, PassContext& context) override {
    onnx::GraphProto& graph = *model.mutable_graph();
    const std::unordered_map<std::string, int> uses = UseCounts(graph);
    std::unordered_set<int> removed;
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      if (!IsCopy(graph, graph.node(idx), uses)) continue;
      const onnx::NodeProto node = graph.node(idx);  // a copy: the rewiring edits the graph
      const bool done = IsGraphOutput(graph, node.output(0))
                            ? RenameProducerOutput(graph, idx, removed, context)
                            : Bypass(graph, idx, context);
      if (!done) continue;
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
