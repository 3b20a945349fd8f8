// One run of the graph: every node in run order at every step, each input taken from where the
// wiring says (a pipeline input, an earlier node this step, a feedback edge's value from the
// previous step or its initial value, or --set), as LEAPP's InferenceManager.run_policy.
#include <chrono>

#include "convgate/core/progress.h"
#include "convgate/core/tensor_copy.h"
#include "convgate/core/units.h"
#include "pipeline/engine.h"

namespace convgate::pipeline::internal {
namespace {

// What a tensor costs beside its elements: the Tensor, its shape, its buffer's and its map
// entry's allocations. A loop of a million steps of 4-float tensors holds its overhead, not its
// elements.
constexpr int64_t kTensorOverhead = 160;

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
  explicit StepRunner(const RunPlan& plan) : plan_(plan) {}

  Result<Trace> Run(const NodeObserver& observe, const StepObserver& on_step) {
    for (size_t edge_idx : plan_.wiring->feedback) {
      auto it = plan_.initial->find(edge_idx);
      if (it == plan_.initial->end()) continue;
      CONVGATE_ASSIGN_OR_RETURN(state_[edge_idx], TryClone(it->second));
    }
    Trace trace;
    ProgressTask progress("pipeline steps", plan_.steps);
    for (int step = 0; step < plan_.steps; ++step) {
      progress.Advance(step);
      std::vector<NodeStep> records(plan_.spec->nodes.size());
      int64_t step_bytes = 0;
      for (size_t node_idx : plan_.wiring->order) {
        CONVGATE_RETURN_IF_ERROR(RunOne(step, node_idx, records));
        step_bytes += HeldBytes(records[node_idx].inputs) + HeldBytes(records[node_idx].outputs);
        CONVGATE_RETURN_IF_ERROR(CheckHeld(step, trace.bytes + step_bytes));
        if (observe) observe(step, node_idx, records[node_idx]);
      }
      CONVGATE_ASSIGN_OR_RETURN(TensorMap outputs, PipelineOutputs(step, records));
      if (on_step) on_step(step, outputs);
      CONVGATE_RETURN_IF_ERROR(AdvanceState(step, records));
      // Only what later steps need stays: the feedback state always, the records and outputs
      // where a validation or --save-outputs reads them afterwards.
      if (plan_.keep_outputs) {
        trace.bytes += HeldBytes(outputs);
        trace.outputs.push_back(std::move(outputs));
      }
      if (plan_.keep_records) {
        trace.bytes += step_bytes;
        trace.steps.push_back(std::move(records));
      }
      CONVGATE_RETURN_IF_ERROR(CheckHeld(step, trace.bytes));
    }
    return trace;
  }

 private:
  // The run's tensors (`kept`, the feedback state, and those held before it began) against
  // --max-run-bytes.
  Status CheckHeld(int step, int64_t kept) const {
    int64_t state = 0;
    for (const auto& [edge, value] : state_) state += StateBytes(value);
    const int64_t total = plan_.held_bytes + kept + state;
    if (total <= plan_.max_run_bytes) return Status::OK();
    return Status::FailedPrecondition(
        "step " + std::to_string(step) + ": the pipeline holds " + FormatBytes(total) +
        " of tensors (" + FormatBytes(plan_.held_bytes) + " before this run, " + FormatBytes(kept) +
        " kept from its steps, " + FormatBytes(state) + " of feedback state), over the limit of " +
        FormatBytes(plan_.max_run_bytes) +
        " (--max-run-bytes; fewer --steps, or raise the limit if the machine can hold that)");
  }

  static int64_t StateBytes(const Tensor& tensor) {
    int64_t bytes = static_cast<int64_t>(tensor.byte_size()) + kTensorOverhead;
    for (const std::string& text : tensor.strings()) bytes += static_cast<int64_t>(text.size());
    return bytes;
  }

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
    const Tensor* value = nullptr;
    if (set != plan_.overrides->end() && (edge == nullptr || !edge->feedback)) {
      value = &set->second;
    } else if (edge == nullptr) {
      return Status::Internal("node input " + name + " has no value");
    } else if (edge->feedback) {
      value = &state_.at(static_cast<size_t>(feed));
    } else if (edge->from.node.empty()) {
      value = (*plan_.inputs)[step].Find(edge->from.tensor);
      if (value == nullptr) {
        return Status::NotFound("step " + std::to_string(step) + ": no value for pipeline input '" +
                                edge->from.tensor + "'");
      }
    } else {
      value = OutputOf(records, edge->from);
      if (value == nullptr) {
        return Status::FailedPrecondition("step " + std::to_string(step) + ": node '" +
                                          edge->from.node + "' returned no output '" +
                                          edge->from.tensor + "' for " + name);
      }
    }
    Result<Tensor> copy = TryClone(*value);
    if (!copy.ok()) return copy.status().WithContext("step " + std::to_string(step) + ", " + name);
    return copy;
  }

  const Tensor* OutputOf(const std::vector<NodeStep>& records, const Endpoint& from) const {
    const size_t idx =
        static_cast<size_t>(plan_.spec->FindNode(from.node) - plan_.spec->nodes.data());
    return records[idx].outputs.Find(from.tensor);
  }

  Result<TensorMap> PipelineOutputs(int step, const std::vector<NodeStep>& records) const {
    TensorMap outputs;
    for (const EdgeSpec& edge : plan_.spec->edges) {
      if (!edge.to.node.empty()) continue;
      const Tensor* value = OutputOf(records, edge.from);
      if (value == nullptr) continue;
      Result<Tensor> copy = TryClone(*value);
      if (!copy.ok()) {
        return copy.status().WithContext("step " + std::to_string(step) + ", pipeline output '" +
                                         edge.to.tensor + "'");
      }
      // Pipeline output names are unique (spec_parse.cc): no search per output.
      outputs.Append(edge.to.tensor, std::move(copy).value());
    }
    return outputs;
  }

  Status AdvanceState(int step, const std::vector<NodeStep>& records) {
    for (size_t edge_idx : plan_.wiring->feedback) {
      const Tensor* value = OutputOf(records, plan_.spec->edges[edge_idx].from);
      if (value == nullptr) continue;
      Result<Tensor> copy = TryClone(*value);
      if (!copy.ok()) {
        return copy.status().WithContext("step " + std::to_string(step) + ", feedback edge " +
                                         plan_.spec->edges[edge_idx].ToString());
      }
      state_[edge_idx] = std::move(copy).value();
    }
    return Status::OK();
  }

  const RunPlan& plan_;
  std::map<size_t, Tensor> state_;  // feedback edge -> the value its input takes next
};

}  // namespace

int64_t HeldBytes(const TensorMap& tensors) {
  int64_t bytes = 0;
  for (const auto& entry : tensors) {
    bytes += static_cast<int64_t>(entry.tensor.byte_size() + entry.name.size()) + kTensorOverhead;
    for (const std::string& text : entry.tensor.strings())
      bytes += static_cast<int64_t>(text.size());
  }
  return bytes;
}

Result<TensorMap> RunNode(LoadedSide& side, const NodeSpec& node, const TensorMap& inputs) {
  const Signature& signature = side.loaded.model->signature();
  CONVGATE_ASSIGN_OR_RETURN(TensorMap fed, TryClone(inputs));
  if (side.positional_inputs && !signature.positional_inputs) {
    CONVGATE_ASSIGN_OR_RETURN(fed, RenameByPosition(std::move(fed), signature.inputs));
  }
  const auto start = std::chrono::steady_clock::now();
  Result<TensorMap> outputs = side.loaded.model->Run(fed, {});
  side.record.run_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  session::RecordBackendLog(side.loaded, side.record);
  if (!outputs.ok()) return outputs.status().WithContext("node '" + node.name + "'");
  if (!side.positional_outputs) return outputs;
  return RenameByPosition(std::move(outputs).value(), node.outputs);
}

Result<Trace> RunSteps(const RunPlan& plan, const NodeObserver& observe,
                       const StepObserver& on_step) {
  return StepRunner(plan).Run(observe, on_step);
}

}  // namespace convgate::pipeline::internal
