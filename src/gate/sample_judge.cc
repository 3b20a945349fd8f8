#include "gate/sample_judge.h"

#include <utility>

#include "convgate/core/join.h"
#include "convgate/gate/judge.h"

namespace convgate::gate::internal {
namespace {

std::optional<GateError> CheckPolicyNames(const compare::Policy& policy, const SideRecord& source,
                                          const SideRecord& target) {
  auto known = [&](const std::string& name) {
    for (const SideRecord* side : {&source, &target}) {
      for (const std::string& output : side->output_names) {
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
                                             JoinComma(source.output_names, "none") + ")")};
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

}  // namespace

SampleJudge::SampleJudge(const compare::AgreementConfig& agreement, CoverageRule coverage,
                         CompareReport& report)
    : report_(report), agreements_(agreement), coverage_rule_(coverage) {}

std::optional<GateError> SampleJudge::CheckNames() const {
  if (auto e = CheckPolicyNames(report_.policy, report_.source, report_.target)) return e;
  return agreements_.CheckNames(report_.source, report_.target);
}

void SampleJudge::Judge(int sample, const TensorMap& source, const TensorMap& target,
                        std::optional<std::string> mismatch) {
  if (mismatch) report_.structure_failures.push_back(std::move(*mismatch));
  if (sample == 0) CheckStructure(source, target, report_);
  for (const auto& entry : source) {
    const Tensor* other = target.Find(entry.name);
    OutputCheck check = CheckOutput(sample, entry.name, entry.tensor, other, report_.policy);
    if (other == nullptr) {
      check.failures.push_back("missing: the target has no output '" + entry.name +
                               "' (target outputs: " + JoinComma(target.Names(), "none") + ")");
      check.hints.push_back(
          "if the converter renamed the output, compare saved outputs whose names agree");
    }
    report_.checks.push_back(std::move(check));
  }
  agreements_.Add(source, target);
  if (coverage_rule_ != CoverageRule::kNotTracked) coverage_.Add(source);
}

// Source outputs the inputs did not exercise: a warning, or with --min-coverage a failure. What
// to try depends on where the inputs came from.
void SampleJudge::ReportCoverage() {
  if (coverage_rule_ == CoverageRule::kNotTracked) return;
  const bool generated = report_.inputs.origin.rfind("generated", 0) == 0;
  const std::string advice =
      generated ? ": the generated inputs may not exercise the model; give real data with --data "
                  "(e.g. --data image:photos/)"
                : ": these inputs may not exercise the model";
  for (const std::string& finding : coverage_.Findings(report_.checks)) {
    if (coverage_rule_ == CoverageRule::kGate) {
      report_.structure_failures.push_back("--min-coverage: " + finding + advice);
    } else {
      report_.warnings.push_back(finding + advice);
    }
  }
}

void SampleJudge::Conclude(size_t samples) {
  FailIfNothingCompared(samples, report_);
  ReportCoverage();
  FinishChecks(report_);
  report_.agreements = agreements_.Finish();
  const bool per_node_passed = !report_.per_node || !report_.per_node->gate_failed;
  const bool passed = report_.structure_failures.empty() && report_.FirstFailure() == nullptr &&
                      report_.FirstAgreementFailure() == nullptr && per_node_passed;
  report_.verdict = passed ? Verdict::kPass : Verdict::kFail;
}

}  // namespace convgate::gate::internal
