// `convgate compare`: both sides on the same samples, every output under the tolerance policy.
// The scheduling (which side loads when, what runs ahead, which session is let go) is the
// session's (session/side_pair.h); this file is the workflow's steps and its judging.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "convgate/core/join.h"
#include "convgate/gate/judge.h"
#include "convgate/gate/pair_policy.h"
#include "convgate/gate/workflows.h"
#include "convgate/session/side.h"
#include "convgate/session/side_pair.h"
#include "gate/compare_calibration.h"
#include "gate/compare_per_node.h"
#include "gate/sample_judge.h"

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

CompareReport Errored(CompareReport report, GateError error) {
  report.error = std::move(error);
  report.verdict = Verdict::kError;
  return report;
}

// The report a deferred target that fails to build gives: the one loading left (`at_load`), with
// what the target's record gained from a load that, undeferred, would have failed.
CompareReport TargetLoadFailed(CompareReport at_load, GateError error) {
  session::ForgetLoad(at_load.target);
  return Errored(std::move(at_load), std::move(error));
}

CompareReport CompareModels(const CompareOptions& options, session::SidePair& pair) {
  CompareReport report = NewReport(options);
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
  internal::SampleJudge judge(
      options.agreement,
      options.min_coverage ? internal::CoverageRule::kGate : internal::CoverageRule::kWarn, report);
  if (auto e = judge.CheckNames()) return errored(*e);
  if (auto e = pair.SetUpSamples(report.inputs)) return errored(*e);
  if (auto e = internal::CheckPerNodeStage(options, pair)) return errored(*e);
  internal::RunAheadAndCalibrate(options, pair, report);
  if (auto e = pair.RunSamples(std::ref(judge)))
    return errored(*e);  // a target that cannot load too
  if (auto e = internal::RunPerNodeStage(options, pair, report)) return errored(*e);
  judge.Conclude(pair.samples());
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
  internal::SampleJudge judge(options.agreement, internal::CoverageRule::kNotTracked, report);
  if (auto e = judge.CheckNames()) return Errored(std::move(report), *e);
  if (source.size() != target.size()) {
    report.structure_failures.push_back("sample count differs: " + options.source_name + " holds " +
                                        std::to_string(source.size()) + ", " + options.target_name +
                                        " holds " + std::to_string(target.size()));
  }
  const size_t samples = std::min(source.size(), target.size());
  for (size_t i = 0; i < samples; ++i) {
    judge.Judge(static_cast<int>(i), source[i], target[i]);
  }
  judge.Conclude(samples);
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
