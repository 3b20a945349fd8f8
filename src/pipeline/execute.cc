// The steps themselves: the source run with its sanity checks, then, with targets, the replay of
// each node, the swapped run and --per-node inside failing nodes.
#include "convgate/compare/tensor_compare.h"
#include "convgate/core/temp_dir.h"
#include "convgate/gate/pair_policy.h"
#include "convgate/gate/workflows.h"
#include "convgate/session/sanity.h"
#include "pipeline/engine.h"
#include "pipeline/validate.h"

namespace convgate::pipeline::internal {
namespace {

bool AllFinite(const TensorMap& tensors) {
  for (const auto& entry : tensors) {
    const compare::ValueSummary values = compare::SummarizeValues(entry.tensor);
    if (values.nan + values.pos_inf + values.neg_inf > 0) return false;
  }
  return true;
}

size_t IndexOf(const Spec& spec, const std::string& node) {
  return static_cast<size_t>(spec.FindNode(node) - spec.nodes.data());
}

// The end-to-end sanity of one node's outputs at one step (gate's run rules).
void CheckNode(const NodeSpec& node, int step, const internal::NodeStep& record,
               gate::RunReport& run) {
  session::SymbolBindings bindings;
  Signature signature;
  signature.inputs = node.inputs;
  bindings.BindInputs(signature, record.inputs);
  const bool inputs_finite = AllFinite(record.inputs);
  for (const auto& output : record.outputs) {
    run.checks.push_back(session::CheckOutputSanity(step, output.name, output.tensor,
                                                    FindDecl(node.outputs, output.name),
                                                    inputs_finite, bindings));
  }
  for (const TensorInfo& decl : node.outputs) {
    if (record.outputs.Find(decl.name) != nullptr) continue;
    gate::SanityCheck missing;
    missing.sample = step;
    missing.output = decl.name;
    missing.passed = false;
    missing.failures.push_back("missing: node '" + node.name + "' returned " +
                               std::to_string(record.outputs.size()) + " output(s), not its " +
                               "declared output '" + decl.name + "' (it declares " +
                               std::to_string(node.outputs.size()) + ")");
    run.checks.push_back(std::move(missing));
  }
}

// The end-to-end sanity of one step's pipeline outputs.
void CheckOutputs(const Spec& spec, int step, const TensorMap& outputs, const TensorMap& inputs,
                  gate::RunReport& run) {
  session::SymbolBindings bindings;
  for (const EdgeSpec& edge : spec.edges) {
    if (!edge.to.node.empty()) continue;
    const Tensor* value = outputs.Find(edge.to.tensor);
    if (value == nullptr) continue;  // the node's own check names the missing output
    run.checks.push_back(session::CheckOutputSanity(
        step, edge.to.tensor, *value,
        FindDecl(spec.FindNode(edge.from.node)->outputs, edge.from.tensor), AllFinite(inputs),
        bindings));
  }
}

bool SanityFailed(const gate::RunReport& run) {
  for (const gate::SanityCheck& check : run.checks) {
    if (!check.passed) return true;
  }
  return false;
}

void Judge(PipelineReport& report) {
  bool failed = SanityFailed(report.outputs_sanity);
  if (report.outputs_compared)
    failed = failed || report.outputs_compared->verdict != gate::Verdict::kPass;
  for (NodeResult& node : report.nodes) {
    node.passed = !SanityFailed(node.source) && node.replay_steps.failed.empty() &&
                  node.swapped_steps.failed.empty();
    // Without targets this is `run` on every node: any sanity failure gates. With targets only the
    // pipeline outputs gate, as in LEAPP, unless --strict.
    const bool gates = report.strict || !report.validated;
    if (!node.passed && gates) failed = true;
  }
  report.verdict = failed ? gate::Verdict::kFail : gate::Verdict::kPass;
}

// compare --per-node of a failing node's two models on the inputs of the steps it failed, so the
// existing machinery names the first divergent tensor, the culprit and NaN origins inside it.
void PerNode(const Spec& spec, const Trace& trace, const PipelineOptions& options,
             NodeResult& result) {
  const NodeSpec& node = spec.nodes[IndexOf(spec, result.name)];
  if (result.replay->source.format != "onnx" || result.replay->target.format != "onnx") {
    result.per_node_note = "--per-node needs two ONNX models (intermediate tensors by name); " +
                           node.name + " is " + result.replay->source.format + " -> " +
                           result.replay->target.format;
    return;
  }
  Result<TempDir> dir = TempDir::Create("pipeline-per-node");
  if (!dir.ok()) {
    result.per_node_note = dir.status().message();
    return;
  }
  inputs::Dataset captured;
  for (int step : result.replay_steps.failed) {
    captured.samples.push_back(trace.steps[step][IndexOf(spec, node.name)].inputs.Clone());
  }
  Signature signature;
  signature.inputs = node.inputs;
  const std::filesystem::path path = dir->path() / "inputs.npz";
  const Status saved = inputs::SaveDataset(path, captured, signature);
  if (!saved.ok()) {
    result.per_node_note = saved.message();
    return;
  }
  gate::CompareOptions compare;
  compare.source = node.model;
  compare.target = node.target;
  compare.source_backend = node.backend;
  compare.target_backend = node.target_backend;
  compare.data.load_inputs = path;
  compare.data.threads = options.data.threads;
  compare.data.limits = options.data.limits;
  compare.policy = options.policy;
  compare.per_node = options.per_node;
  compare.per_node.enabled = true;
  compare.backend_factory = options.backend_factory;
  result.per_node = gate::CompareModelsGate(compare);
  result.per_node_note = "on the inputs of the " + std::to_string(captured.samples.size()) +
                         " failing step(s) (sample i = failing step " +
                         std::to_string(result.replay_steps.failed.front()) + " onwards)";
}

Status SaveOutputs(const Spec& spec, const Trace& trace, const std::filesystem::path& path) {
  inputs::Dataset outputs;
  for (const TensorMap& step : trace.outputs) outputs.samples.push_back(step.Clone());
  std::vector<TensorInfo> declared;
  for (const EdgeSpec& edge : spec.edges) {
    if (!edge.to.node.empty()) continue;
    TensorInfo info = *FindDecl(spec.FindNode(edge.from.node)->outputs, edge.from.tensor);
    info.name = edge.to.tensor;
    declared.push_back(std::move(info));
  }
  return inputs::SaveOutputs(path, outputs, declared);
}

// The policy each node's target is judged under (gate::DecidePairPolicy): the --to conversion's
// for the nodes it converted, else what the target's graph computes in. The pipeline's own
// outputs, which every swapped-in target feeds, take the first node's reduced-precision defaults
// when the pipeline has none of its own.
std::vector<compare::Policy> NodePolicies(const Spec& spec, const std::vector<LoadedNode>& nodes,
                                          const PipelineOptions& options, PipelineReport& report) {
  std::vector<compare::Policy> policies(spec.nodes.size(), report.policy);
  for (size_t idx = 0; idx < spec.nodes.size(); ++idx) {
    if (!nodes[idx].target) continue;
    gate::PairFacts facts;
    if (nodes[idx].converted && options.conversion) facts.conversion = &*options.conversion;
    facts.source = nodes[idx].source.record.path;
    facts.target = nodes[idx].target->record.path;
    gate::ApplyPairPolicy(facts, policies[idx]);
    if (!report.policy.conversion_defaults) {
      report.policy.conversion_defaults = policies[idx].conversion_defaults;
    }
  }
  return policies;
}

PipelineReport Errored(PipelineReport report, gate::Stage stage, const Status& status) {
  report.error = gate::GateError{stage, status};
  report.verdict = gate::Verdict::kError;
  return report;
}

}  // namespace

PipelineReport RunAndValidate(const Spec& spec, const Wiring& wiring,
                              std::vector<LoadedNode>& nodes, const inputs::Dataset& dataset,
                              const std::map<size_t, Tensor>& initial,
                              const std::map<std::string, Tensor>& overrides,
                              const PipelineOptions& options, PipelineReport report) {
  RunPlan plan{&spec, &wiring, &nodes, false, &dataset.samples, &initial, &overrides, report.steps};
  // Only what is read after the run is kept: every step's records for a validation, the pipeline
  // outputs for it or --save-outputs; all of it, with the inputs of every step, the initial and
  // --set values, under --max-run-bytes.
  plan.keep_records = report.validated;
  plan.keep_outputs = report.validated || options.data.save_outputs.has_value();
  plan.max_run_bytes = options.data.limits.max_run_bytes;
  for (const TensorMap& sample : dataset.samples) plan.held_bytes += HeldBytes(sample);
  for (const auto& [edge, value] : initial)
    plan.held_bytes += static_cast<int64_t>(value.byte_size());
  for (const auto& [name, value] : overrides)
    plan.held_bytes += static_cast<int64_t>(value.byte_size());
  std::map<std::string, NodeResult*> results;
  for (NodeResult& result : report.nodes) results[result.name] = &result;
  Result<Trace> source = RunSteps(
      plan,
      [&](int step, size_t node_idx, const NodeStep& record) {
        const NodeSpec& node = spec.nodes[node_idx];
        CheckNode(node, step, record, results[node.name]->source);
      },
      [&](int step, const TensorMap& outputs) {
        CheckOutputs(spec, step, outputs, dataset.samples[step], report.outputs_sanity);
      });
  if (!source.ok()) return Errored(std::move(report), gate::Stage::kRun, source.status());
  if (options.data.save_inputs.has_value()) {
    Signature signature;
    signature.inputs = wiring.inputs;
    const Status saved = inputs::SaveDataset(*options.data.save_inputs, dataset, signature);
    if (!saved.ok()) return Errored(std::move(report), gate::Stage::kWrite, saved);
    report.data.saved_to = options.data.save_inputs->string();
  }
  if (options.data.save_outputs.has_value()) {
    const Status saved = SaveOutputs(spec, *source, *options.data.save_outputs);
    if (!saved.ok()) return Errored(std::move(report), gate::Stage::kWrite, saved);
    report.outputs_saved_to = options.data.save_outputs->string();
  }
  if (report.validated) {
    const std::vector<compare::Policy> policies = NodePolicies(spec, nodes, options, report);
    for (NodeResult& result : report.nodes) {
      const size_t node_idx = IndexOf(spec, result.name);
      if (nodes[node_idx].target) {
        ReplayNode(spec, node_idx, nodes[node_idx], *source, policies[node_idx], result);
      }
    }
    plan.use_targets = true;
    plan.held_bytes += source->bytes;
    Result<Trace> swapped = RunSteps(plan, nullptr);
    if (!swapped.ok()) {
      return Errored(std::move(report), gate::Stage::kRun,
                     swapped.status().WithContext("the run with the targets swapped in"));
    }
    CompareSwapped(spec, wiring, *source, *swapped, policies, report);
    for (NodeResult& result : report.nodes) {
      if (options.per_node.enabled && result.replay && !result.replay_steps.failed.empty()) {
        PerNode(spec, *source, options, result);
      }
    }
  }
  for (NodeResult& result : report.nodes) {
    result.source.model = nodes[IndexOf(spec, result.name)].source.record;  // with its run time
  }
  Judge(report);
  return report;
}

}  // namespace convgate::pipeline::internal
