// One run of the graph: every node in run order at every step, each input taken from where the
// wiring says (a pipeline input, an earlier node this step, a feedback edge's value from the
// previous step or its initial value, or --set), as LEAPP's InferenceManager.run_policy.
#include <chrono>

#include "pipeline/engine.h"

namespace convgate::pipeline::internal {
namespace {

// Renames `tensors` by position to `names` (the node's declarations or the model's own).
Result<TensorMap> RenameByPosition(TensorMap tensors, const std::vector<TensorInfo>& names) {
  if (tensors.size() != names.size()) return tensors;  // the count mismatch is reported later
  TensorMap renamed;
  for (size_t idx = 0; idx < names.size(); ++idx) {
    CONVGATE_RETURN_IF_ERROR(renamed.Insert(names[idx].name, std::move(tensors[idx].tensor)));
  }
  return renamed;
}

class StepRunner {
 public:
  explicit StepRunner(const RunPlan& plan) : plan_(plan) {
    for (size_t edge_idx : plan.wiring->feedback) {
      auto it = plan.initial->find(edge_idx);
      if (it != plan.initial->end()) state_[edge_idx] = it->second.Clone();
    }
  }

  Result<Trace> Run(const NodeObserver& observe) {
    Trace trace;
    for (int step = 0; step < plan_.steps; ++step) {
      trace.steps.emplace_back(plan_.spec->nodes.size());
      std::vector<NodeStep>& records = trace.steps.back();
      for (size_t node_idx : plan_.wiring->order) {
        CONVGATE_RETURN_IF_ERROR(RunOne(step, node_idx, records));
        if (observe) observe(step, node_idx, records[node_idx]);
      }
      trace.outputs.push_back(PipelineOutputs(records));
      AdvanceState(records);
    }
    return trace;
  }

 private:
  Status RunOne(int step, size_t node_idx, std::vector<NodeStep>& records) {
    const NodeSpec& node = plan_.spec->nodes[node_idx];
    NodeStep& record = records[node_idx];
    for (size_t input_idx = 0; input_idx < node.inputs.size(); ++input_idx) {
      CONVGATE_ASSIGN_OR_RETURN(Tensor value, InputValue(step, node_idx, input_idx, records));
      CONVGATE_RETURN_IF_ERROR(record.inputs.Insert(node.inputs[input_idx].name, std::move(value)));
    }
    LoadedNode& loaded = (*plan_.nodes)[node_idx];
    LoadedSide& side = plan_.use_targets && loaded.target ? *loaded.target : loaded.source;
    Result<TensorMap> outputs = RunNode(side, node, record.inputs);
    if (!outputs.ok()) {
      return outputs.status().WithContext("step " + std::to_string(step) + ", " + side.record.role);
    }
    record.outputs = std::move(outputs).value();
    record.ran = true;
    return Status::OK();
  }

  Result<Tensor> InputValue(int step, size_t node_idx, size_t input_idx,
                            const std::vector<NodeStep>& records) const {
    const NodeSpec& node = plan_.spec->nodes[node_idx];
    const std::string name = node.name + "." + node.inputs[input_idx].name;
    const int feed = plan_.wiring->feeds[node_idx][input_idx];
    const EdgeSpec* edge = feed >= 0 ? &plan_.spec->edges[feed] : nullptr;
    auto set = plan_.overrides->find(name);
    // --set on a feedback input gives its initial value (in initial); elsewhere it wins always.
    if (set != plan_.overrides->end() && (edge == nullptr || !edge->feedback)) {
      return set->second.Clone();
    }
    if (edge == nullptr) return Status::Internal("node input " + name + " has no value");
    if (edge->feedback) return state_.at(static_cast<size_t>(feed)).Clone();
    if (edge->from.node.empty()) {
      const Tensor* value = (*plan_.inputs)[step].Find(edge->from.tensor);
      if (value == nullptr) {
        return Status::NotFound("step " + std::to_string(step) + ": no value for pipeline input '" +
                                edge->from.tensor + "'");
      }
      return value->Clone();
    }
    return OutputOf(records, edge->from)->Clone();
  }

  const Tensor* OutputOf(const std::vector<NodeStep>& records, const Endpoint& from) const {
    const size_t idx =
        static_cast<size_t>(plan_.spec->FindNode(from.node) - plan_.spec->nodes.data());
    return records[idx].outputs.Find(from.tensor);
  }

  TensorMap PipelineOutputs(const std::vector<NodeStep>& records) const {
    TensorMap outputs;
    for (const EdgeSpec& edge : plan_.spec->edges) {
      if (!edge.to.node.empty()) continue;
      const Tensor* value = OutputOf(records, edge.from);
      if (value != nullptr) outputs.InsertOrAssign(edge.to.tensor, value->Clone());
    }
    return outputs;
  }

  void AdvanceState(const std::vector<NodeStep>& records) {
    for (size_t edge_idx : plan_.wiring->feedback) {
      const Tensor* value = OutputOf(records, plan_.spec->edges[edge_idx].from);
      if (value != nullptr) state_[edge_idx] = value->Clone();
    }
  }

  const RunPlan& plan_;
  std::map<size_t, Tensor> state_;  // feedback edge -> the value its input takes next
};

}  // namespace

Result<TensorMap> RunNode(LoadedSide& side, const NodeSpec& node, const TensorMap& inputs) {
  const Signature& signature = side.loaded.model->signature();
  TensorMap fed = inputs.Clone();
  if (side.positional_inputs && !signature.positional_inputs) {
    CONVGATE_ASSIGN_OR_RETURN(fed, RenameByPosition(std::move(fed), signature.inputs));
  }
  const auto start = std::chrono::steady_clock::now();
  Result<TensorMap> outputs = side.loaded.model->Run(fed, {});
  side.record.run_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  gate::internal::RecordBackendLog(side.loaded, side.record);
  if (!outputs.ok()) return outputs.status().WithContext("node '" + node.name + "'");
  if (!side.positional_outputs) return outputs;
  return RenameByPosition(std::move(outputs).value(), node.outputs);
}

Result<Trace> RunSteps(const RunPlan& plan, const NodeObserver& observe) {
  return StepRunner(plan).Run(observe);
}

}  // namespace convgate::pipeline::internal
