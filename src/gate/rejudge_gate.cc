#include <algorithm>

#include "convgate/gate/judge.h"
#include "convgate/gate/rejudge.h"
#include "gate/compare_judging.h"

namespace convgate::gate {
namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A per-output setting naming no output is a typo that would silently not apply.
std::optional<GateError> CheckNames(const compare::Policy& overlay, const CompareReport& report) {
  for (const std::string& name : overlay.NamedOutputs()) {
    const bool known = Contains(report.source.output_names, name) ||
                       Contains(report.target.output_names, name) ||
                       std::any_of(report.checks.begin(), report.checks.end(),
                                   [&](const OutputCheck& check) { return check.output == name; });
    if (known) continue;
    std::string outputs;
    for (const std::string& output : report.source.output_names) {
      outputs += (outputs.empty() ? "" : ", ") + output;
    }
    return GateError{Stage::kFlags,
                     Status::InvalidArgument("a tolerance names output '" + name +
                                             "', which neither side of the report has (source "
                                             "outputs: " +
                                             (outputs.empty() ? "none" : outputs) + ")")};
  }
  return std::nullopt;
}

void Rejudge(const compare::Policy& policy, OutputCheck& check) {
  if (!check.comparison.has_value()) return;  // a missing output fails whatever the policy
  const compare::TensorComparison& cmp = *check.comparison;
  check.policy = policy.For(check.output, internal::DTypeOfDescription(cmp.source_desc),
                            internal::DTypeOfDescription(cmp.target_desc));
  check.tolerance = check.policy.tolerance();
  check.hints.clear();
  JudgeCheck(check, nullptr, nullptr);
}

bool AgreementsPass(const CompareReport& report) {
  return report.FirstAgreementFailure() == nullptr;
}

}  // namespace

CompareReport RejudgeCompareReport(CompareReport saved, const compare::Policy& overlay,
                                   std::string from) {
  CompareReport report = std::move(saved);
  report.rejudged_from = std::move(from);
  // Per-node validation judged tensors the report does not hold: it is not re-judged, and a
  // section judged under the saved policy would contradict the new verdicts, so it is dropped.
  report.per_node.reset();
  if (auto error = CheckNames(overlay, report)) {
    report.error = std::move(error);
    report.verdict = Verdict::kError;
    return report;
  }
  report.policy.MergeFrom(overlay);
  for (OutputCheck& check : report.checks) Rejudge(report.policy, check);
  FinishChecks(report);
  const bool passed = report.structure_failures.empty() && report.FirstFailure() == nullptr &&
                      AgreementsPass(report);
  report.verdict = passed ? Verdict::kPass : Verdict::kFail;
  return report;
}

}  // namespace convgate::gate
