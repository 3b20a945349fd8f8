// `convgate compare`: both sides on the same samples, every output under the tolerance policy.
// The scheduling (which side loads when, what runs ahead, which session is let go) is the
// session's (session/side_pair.h); this file is the workflow's steps and its judging.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "convgate/core/join.h"
#include "convgate/gate/judge.h"
#include "convgate/gate/pair_policy.h"
#include "convgate/gate/workflows.h"
#include "convgate/session/save_paths.h"
#include "convgate/session/side.h"
#include "convgate/session/side_pair.h"
#include "gate/compare_agreement.h"
#include "gate/compare_calibration.h"
#include "gate/input_coverage.h"
#include "gate/per_node/run.h"
#include "gate/per_node/subgraphs.h"

namespace convgate::gate {
namespace {

CompareReport NewReport(const CompareOptions& options) {
  CompareReport report;
  report.policy = options.policy;
  report.source.role = "source";
  report.target.role = "target";
  report.source.path = options.source;
  report.target.path = options.target;
  // "position" when a side names its outputs by position (SidePair::RunSamples).
  report.source.output_matching = report.target.output_matching = "name";
  return report;
}

// A per-output tolerance naming no output is a typo that would silently not apply.
std::optional<GateError> CheckPolicyNames(const compare::Policy& policy,
                                          const session::Side& source,
                                          const session::Side& target) {
  auto known = [&](const std::string& name) {
    for (const session::Side* side : {&source, &target}) {
      for (const std::string& output : side->record->output_names) {
        if (output == name) return true;
      }
    }
    return false;
  };
  for (const std::string& name : policy.NamedOutputs()) {
    if (known(name)) continue;
    return GateError{Stage::kFlags,
                     Status::InvalidArgument("a tolerance names output '" + name +
                                             "', which neither side has (source outputs: " +
                                             JoinComma(source.record->output_names, "none") + ")")};
  }
  return std::nullopt;
}

void CheckStructure(const TensorMap& source, const TensorMap& target, CompareReport& report) {
  if (source.size() != target.size()) {
    report.structure_failures.push_back(
        "output count differs: the source has " + std::to_string(source.size()) + " (" +
        JoinComma(source.Names(), "none") + "), the target has " + std::to_string(target.size()) +
        " (" + JoinComma(target.Names(), "none") + ")");
  }
  for (const auto& entry : target) {
    if (source.Find(entry.name) == nullptr) {
      report.structure_failures.push_back("the target has an output '" + entry.name +
                                          "' that the source lacks");
    }
  }
}

void CompareSample(int sample_idx, const TensorMap& source, const TensorMap& target,
                   CompareReport& report) {
  if (sample_idx == 0) CheckStructure(source, target, report);
  for (const auto& entry : source) {
    const Tensor* other = target.Find(entry.name);
    OutputCheck check = CheckOutput(sample_idx, entry.name, entry.tensor, other, report.policy);
    if (other == nullptr) {
      check.failures.push_back("missing: the target has no output '" + entry.name +
                               "' (target outputs: " + JoinComma(target.Names(), "none") + ")");
      check.hints.push_back(
          "if the converter renamed the output, compare saved outputs whose names agree");
    }
    report.checks.push_back(std::move(check));
  }
}

CompareReport Errored(CompareReport report, GateError error) {
  report.error = std::move(error);
  report.verdict = Verdict::kError;
  return report;
}

// A comparison that compared nothing proves nothing: when neither side has a single output (an
// empty .npz, a model without outputs) no check could fail, and a pass would be a lie.
void FailIfNothingCompared(size_t samples, CompareReport& report) {
  if (!report.checks.empty() || !report.structure_failures.empty()) return;
  if (samples == 0) {
    report.structure_failures.push_back("nothing was compared: there are no samples");
    return;
  }
  report.structure_failures.push_back(
      "nothing was compared: neither the source (" + report.source.path + ") nor the target (" +
      report.target.path + ") has any output, so no output could be checked");
}

// --per-node needs two models whose backends expose intermediate tensors; checked before any run.
std::optional<GateError> CheckPerNodeSides(const PerNodeOptions& options,
                                           const session::Side& source,
                                           const session::Side& target) {
  if (!options.enabled) return std::nullopt;
  for (const session::Side* side : {&source, &target}) {
    if (!side->model) {
      return GateError{Stage::kFlags, Status::InvalidArgument(
                                          "--per-node needs two models: the " + side->record->role +
                                          " " + side->record->path + " holds saved outputs")};
    }
    if (!side->model->backend->SupportsIntermediates()) {
      return GateError{Stage::kFlags,
                       Status::InvalidArgument("--per-node: the " + side->record->role +
                                               " backend '" + side->model->backend->name() +
                                               "' cannot expose intermediate tensors")};
    }
  }
  return std::nullopt;
}

// --per-node feeds both models the same named inputs: a target that takes them renamed or
// transposed (--map, ':0', position, --target-layout) is not supported there yet.
std::optional<GateError> CheckPerNodeInputs(const PerNodeOptions& options,
                                            const session::SidePair& pair) {
  if (!options.enabled || pair.target_takes_inputs_as_they_are()) return std::nullopt;
  return GateError{Stage::kFlags,
                   Status::InvalidArgument(
                       "--per-node needs a target that takes the source's inputs as they are; "
                       "this one takes them renamed or transposed (see the target's notes): "
                       "compare its outputs without --per-node")};
}

// A calibrated comparison calibrates its intermediates too (per_node.h).
PerNodeOptions PerNodeOptionsOf(const CompareOptions& options) {
  PerNodeOptions per_node = options.per_node;
  per_node.calibrate = per_node.calibrate || options.calibration.enabled;
  return per_node;
}

std::optional<GateError> RunPerNodeStage(const CompareOptions& options, session::Side& source,
                                         session::Side& target, const inputs::Dataset& dataset,
                                         CompareReport& report) {
  auto side_of = [](session::Side& side) {
    return internal::PerNodeSide{side.model->backend.get(), side.model->model.get(),
                                 side.resolved.path, side.record->role};
  };
  // Inside If/Loop/Scan bodies too: subgraphs.h.
  Result<PerNodeReport> per_node = internal::RunPerNodeWithSubgraphs(
      side_of(source), session::SideLoadOptions(options.data, options.source_exec), side_of(target),
      session::SideLoadOptions(options.data, options.target_exec), dataset.samples, report.policy,
      PerNodeOptionsOf(options));
  if (!per_node.ok()) return GateError{Stage::kRun, per_node.status().WithContext("--per-node")};
  report.per_node = std::move(per_node).value();
  return std::nullopt;
}

// The report a deferred target that fails to build gives: the one loading left (`at_load`), with
// what the target's record gained from a load that, undeferred, would have failed.
CompareReport TargetLoadFailed(CompareReport at_load, GateError error) {
  session::ForgetLoad(at_load.target);
  return Errored(std::move(at_load), std::move(error));
}

// What can be refused from what the sides declare, before anything runs.
std::optional<GateError> CheckBeforeRunning(const CompareOptions& options, session::SidePair& pair,
                                            const internal::AgreementTracker& agreements,
                                            const CompareReport& report) {
  if (auto e = CheckPolicyNames(options.policy, pair.source(), pair.target())) return e;
  if (auto e = CheckPerNodeSides(options.per_node, pair.source(), pair.target())) return e;
  return agreements.CheckNames(report.source, report.target);
}

// Floors only change tolerances nobody set, so they are known before anything is judged. They
// are measured against the source's outputs run ahead (compare_calibration.h), after the source's
// session was let go, so at most two sessions are ever held.
void RunAheadAndCalibrate(const CompareOptions& options, session::SidePair& pair,
                          CompareReport& report) {
  const internal::CalibrationStep calibration =
      options.calibration.enabled
          ? internal::StartCalibration(options, pair.source().resolved, pair.dataset(),
                                       pair.SourceSha256(), report)
          : internal::CalibrationStep{};
  const std::vector<TensorMap>& ahead = pair.RunSourceAhead(calibration.variant.has_value());
  if (calibration.variant && !pair.ahead_failed() && pair.dataset().has_value()) {
    internal::FinishCalibration(calibration, options, pair.source().resolved, *pair.dataset(),
                                ahead, report);
    session::ReleaseFreedMemory();
  }
}

// One sample's outputs of both sides (positional names matched by the pair): every output
// judged, classifier agreement counted.
void JudgeSample(session::SidePair::SampleOutputs& outputs, internal::AgreementTracker& agreements,
                 internal::CoverageTracker& coverage, CompareReport& report) {
  if (outputs.mismatch) report.structure_failures.push_back(std::move(*outputs.mismatch));
  CompareSample(outputs.sample, outputs.source, outputs.target, report);
  agreements.Add(outputs.source, outputs.target);
  coverage.Add(outputs.source);
}

// Source outputs the inputs did not exercise: a warning, or with --min-coverage a failure. What
// to try depends on where the inputs came from.
void ReportCoverage(const CompareOptions& options, const internal::CoverageTracker& coverage,
                    CompareReport& report) {
  const bool generated = report.inputs.origin.rfind("generated", 0) == 0;
  const std::string advice =
      generated ? ": the generated inputs may not exercise the model; give real data with --data "
                  "(e.g. --data image:photos/)"
                : ": these inputs may not exercise the model";
  for (const std::string& finding : coverage.Findings(report.checks)) {
    if (options.min_coverage) {
      report.structure_failures.push_back("--min-coverage: " + finding + advice);
    } else {
      report.warnings.push_back(finding + advice);
    }
  }
}

// The verdict, once every check is in, and what a reader needs beside it.
void Conclude(const internal::AgreementTracker& agreements, CompareReport& report) {
  FinishChecks(report);
  report.agreements = agreements.Finish();
  const bool per_node_passed = !report.per_node || !report.per_node->gate_failed;
  const bool passed = report.structure_failures.empty() && report.FirstFailure() == nullptr &&
                      report.FirstAgreementFailure() == nullptr && per_node_passed;
  report.verdict = passed ? Verdict::kPass : Verdict::kFail;
}

CompareReport CompareModels(const CompareOptions& options, session::SidePair& pair) {
  CompareReport report = NewReport(options);
  if (auto e = session::CheckSavePaths(
          options.data, {{"the source", options.source}, {"the target", options.target}})) {
    return Errored(std::move(report), *e);
  }
  // A target computing in float16 is judged as one whether or not convgate converted it.
  ApplyPairPolicy(PairFacts{.source = options.source, .target = options.target}, report.policy);
  if (auto e = pair.Load(report.source, report.target)) return Errored(std::move(report), *e);
  // A deferred target is built before any later error is reported: one that cannot load reports
  // what it would have reported at loading, ahead of everything after it.
  const CompareReport at_load = report;
  const auto errored = [&](GateError error) {
    if (auto load_error = pair.PrepareTarget()) return TargetLoadFailed(at_load, *load_error);
    return Errored(std::move(report), std::move(error));
  };
  internal::AgreementTracker agreements(options.agreement);
  internal::CoverageTracker coverage;
  if (auto e = CheckBeforeRunning(options, pair, agreements, report)) return errored(*e);
  if (auto e = pair.SetUpSamples(report.inputs)) return errored(*e);
  if (auto e = CheckPerNodeInputs(options.per_node, pair)) return errored(*e);
  RunAheadAndCalibrate(options, pair, report);
  const auto judge = [&](session::SidePair::SampleOutputs& outputs) -> std::optional<GateError> {
    JudgeSample(outputs, agreements, coverage, report);
    return std::nullopt;
  };
  if (auto e = pair.RunSamples(judge)) return errored(*e);  // a target that cannot load too
  FailIfNothingCompared(pair.samples(), report);
  ReportCoverage(options, coverage, report);
  if (options.per_node.enabled && pair.dataset().has_value()) {
    if (auto e = RunPerNodeStage(options, pair.source(), pair.target(), *pair.dataset(), report)) {
      return errored(*e);
    }
  }
  Conclude(agreements, report);
  return report;
}

// --benchmark times two models: saved outputs have no speed.
std::optional<GateError> CheckBenchmarkSides(const CompareOptions& options) {
  for (const auto& [role, path, backend] :
       {std::tuple{"SOURCE", &options.source, &options.source_backend},
        std::tuple{"TARGET", &options.target, &options.target_backend}}) {
    Result<session::ResolvedSide> side = session::ResolveSide(*path, *backend);
    if (side.ok() && side->kind == session::SideKind::kOutputs) {
      return GateError{Stage::kFlags,
                       Status::InvalidArgument(std::string("--benchmark times two models: ") +
                                               role + " " + *path + " holds saved outputs")};
    }
  }
  return std::nullopt;
}

// Both models timed after the comparison (the comparison's sessions are gone: each side's memory
// is its own); a failed speed gate fails the comparison.
void Benchmark(const CompareOptions& options, CompareReport& report) {
  session::PairSpec spec = options;
  spec.data.save_inputs.reset();
  spec.data.save_outputs.reset();
  if (auto e = BenchmarkPair(spec, options.benchmark, report.benchmark.emplace())) {
    report.error = *e;
    report.verdict = Verdict::kError;
    return;
  }
  if (bench::SpeedGateFailed(*report.benchmark) && report.verdict == Verdict::kPass) {
    report.verdict = Verdict::kFail;
  }
}

// The pair a comparison runs: its samples streamed, unless per-node runs or calibration read
// every sample again.
session::PairSpec PairSpecOf(const CompareOptions& options) {
  session::PairSpec spec = options;
  spec.data.stream = !options.per_node.enabled && !options.calibration.enabled;
  return spec;
}

void DescribeHeld(const std::string& name, const std::vector<TensorMap>& samples,
                  SideRecord& record) {
  record.path = name;
  record.kind = "outputs";
  record.format = "arrays";
  record.backend = "outputs";
  if (!samples.empty()) record.output_names = samples.front().Names();
}

}  // namespace

CompareReport CompareHeldOutputs(const HeldOutputsOptions& options,
                                 const std::vector<TensorMap>& source,
                                 const std::vector<TensorMap>& target) {
  CompareOptions named;
  named.source = options.source_name;
  named.target = options.target_name;
  named.policy = options.policy;
  CompareReport report = NewReport(named);
  DescribeHeld(options.source_name, source, report.source);
  DescribeHeld(options.target_name, target, report.target);
  report.inputs.origin = "none: outputs given as arrays";
  report.inputs.samples = static_cast<int>(source.size());
  internal::AgreementTracker agreements(options.agreement);
  if (auto e = agreements.CheckNames(report.source, report.target)) {
    return Errored(std::move(report), *e);
  }
  if (source.size() != target.size()) {
    report.structure_failures.push_back("sample count differs: " + options.source_name + " holds " +
                                        std::to_string(source.size()) + ", " + options.target_name +
                                        " holds " + std::to_string(target.size()));
  }
  const size_t samples = std::min(source.size(), target.size());
  for (size_t i = 0; i < samples; ++i) {
    CompareSample(static_cast<int>(i), source[i], target[i], report);
    agreements.Add(source[i], target[i]);
  }
  FailIfNothingCompared(samples, report);
  Conclude(agreements, report);
  return report;
}

CompareReport CompareModelsGate(const CompareOptions& options) {
  if (options.benchmark.enabled) {
    if (auto e = CheckBenchmarkSides(options)) return Errored(NewReport(options), *e);
  }
  CompareReport report;
  {
    session::SidePair pair(PairSpecOf(options));  // hashes the source beside its load
    report = CompareModels(options, pair);
    if (!report.source.kind.empty()) report.source.sha256 = pair.SourceSha256();  // described
  }
  if (options.benchmark.enabled && !report.error) Benchmark(options, report);
  return report;
}

}  // namespace convgate::gate
