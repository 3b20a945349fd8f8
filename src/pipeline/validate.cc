// Node-by-node and end-to-end validation of converted nodes. Each comparison is the compare
// workflow's: compare::CompareTensors under the policy, judged by gate's JudgeCheck, aggregated
// and hinted as `convgate compare` does, with sample i standing for step i.
#include "pipeline/validate.h"

#include "convgate/compare/tensor_compare.h"
#include "convgate/core/join.h"
#include "convgate/gate/judge.h"

namespace convgate::pipeline::internal {
namespace {

// Where a node input comes from, for "inherited from ...".
std::string FeederOf(const Spec& spec, const Wiring& wiring, size_t node_idx, size_t input_idx) {
  const int feed = wiring.feeds[node_idx][input_idx];
  if (feed < 0)
    return "--set " + spec.nodes[node_idx].name + "." + spec.nodes[node_idx].inputs[input_idx].name;
  const EdgeSpec& edge = spec.edges[feed];
  return edge.from.node.empty() ? "pipeline input '" + edge.from.tensor + "'"
                                : edge.from.ToString() + (edge.feedback ? " (feedback)" : "");
}

bool NonFinite(const Tensor& tensor, compare::ValueSummary* summary = nullptr) {
  const compare::ValueSummary values = compare::SummarizeValues(tensor);
  if (summary != nullptr) *summary = values;
  return values.nan + values.pos_inf + values.neg_inf > 0;
}

void MarkNonFinite(const Spec& spec, const Wiring& wiring, size_t node_idx, int step,
                   const NodeStep& record, NodeResult& result) {
  std::string from;
  for (size_t input_idx = 0; input_idx < record.inputs.size() && from.empty(); ++input_idx) {
    if (NonFinite(record.inputs[input_idx].tensor))
      from = FeederOf(spec, wiring, node_idx, input_idx);
  }
  for (const auto& output : record.outputs) {
    compare::ValueSummary values;
    if (!NonFinite(output.tensor, &values)) continue;
    result.non_finite.push_back(NonFiniteEvent{step, output.name, values.nan,
                                               values.pos_inf + values.neg_inf,
                                               from.empty() ? "introduced" : "inherited", from});
  }
}

gate::CompareReport NewComparison(const gate::SideRecord& source, const gate::SideRecord& target,
                                  const compare::Policy& policy) {
  gate::CompareReport report;
  report.source = source;
  report.target = target;
  report.policy = policy;
  return report;
}

}  // namespace

bool CompareStep(int step, const std::string& what, const TensorMap& source,
                 const TensorMap& target, gate::CompareReport& report) {
  bool failed = false;
  const std::string at = "step " + std::to_string(step) + ": ";
  if (source.size() != target.size()) {
    report.structure_failures.push_back(
        at + what + " output count differs: the source returned " + std::to_string(source.size()) +
        " (" + JoinComma(source.Names()) + "), the target " + std::to_string(target.size()) + " (" +
        JoinComma(target.Names()) + ")");
    failed = true;
  }
  for (const auto& entry : source) {
    const Tensor* other = target.Find(entry.name);
    gate::OutputCheck check =
        gate::CheckOutput(step, entry.name, entry.tensor, other, report.policy);
    if (other == nullptr) {
      check.failures.push_back("missing: the target returned no output '" + entry.name + "'");
    }
    failed = failed || !check.passed;
    report.checks.push_back(std::move(check));
  }
  return failed;
}

StepVerdicts FinishComparison(gate::CompareReport& report, const std::vector<bool>& failed) {
  gate::FinishChecks(report);
  StepVerdicts verdicts = DescribeSteps(failed);
  report.verdict = verdicts.failed.empty() ? gate::Verdict::kPass : gate::Verdict::kFail;
  return verdicts;
}

void ReplayNode(const Spec& spec, size_t node_idx, LoadedNode& loaded, const Trace& source,
                const compare::Policy& policy, NodeResult& result) {
  const NodeSpec& node = spec.nodes[node_idx];
  gate::CompareReport report = NewComparison(loaded.source.record, loaded.target->record, policy);
  std::vector<bool> failed;
  for (size_t step = 0; step < source.steps.size(); ++step) {
    const NodeStep& record = source.steps[step][node_idx];
    Result<TensorMap> outputs = RunNode(*loaded.target, node, record.inputs);
    if (!outputs.ok()) {
      report.structure_failures.push_back(
          "step " + std::to_string(step) +
          ": the target failed to run: " + outputs.status().message());
      failed.push_back(true);
      continue;
    }
    failed.push_back(CompareStep(static_cast<int>(step), "node '" + node.name + "'", record.outputs,
                                 *outputs, report));
  }
  report.target = loaded.target->record;
  result.replay_steps = FinishComparison(report, failed);
  result.replay = std::move(report);
}

void CompareSwapped(const Spec& spec, const Wiring& wiring, const Trace& source,
                    const Trace& swapped, const std::vector<compare::Policy>& node_policies,
                    PipelineReport& report) {
  for (NodeResult& result : report.nodes) {
    const size_t node_idx = static_cast<size_t>(spec.FindNode(result.name) - spec.nodes.data());
    gate::SideRecord target = result.replay ? result.replay->target : result.source.model;
    gate::CompareReport compared =
        NewComparison(result.source.model, target, node_policies[node_idx]);
    std::vector<bool> failed;
    for (size_t step = 0; step < swapped.steps.size(); ++step) {
      const NodeStep& record = swapped.steps[step][node_idx];
      MarkNonFinite(spec, wiring, node_idx, static_cast<int>(step), record, result);
      failed.push_back(CompareStep(static_cast<int>(step), "node '" + result.name + "'",
                                   source.steps[step][node_idx].outputs, record.outputs, compared));
    }
    result.swapped_steps = FinishComparison(compared, failed);
    result.swapped = std::move(compared);
  }
  gate::SideRecord side;
  side.role = "pipeline";
  side.path = spec.path.string();
  side.kind = "pipeline";
  gate::CompareReport outputs = NewComparison(side, side, report.policy);
  outputs.source.role = "source";
  outputs.target.role = "target";
  std::vector<bool> failed;
  for (size_t step = 0; step < swapped.outputs.size(); ++step) {
    failed.push_back(CompareStep(static_cast<int>(step), "pipeline", source.outputs[step],
                                 swapped.outputs[step], outputs));
  }
  report.outputs_steps = FinishComparison(outputs, failed);
  report.outputs_compared = std::move(outputs);
}

}  // namespace convgate::pipeline::internal
