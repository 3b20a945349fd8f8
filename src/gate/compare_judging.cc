#include "gate/compare_judging.h"

#include "convgate/compare/judge.h"
#include "convgate/compare/tensor_compare.h"
#include "convgate/gate/judge.h"

namespace convgate::gate {
namespace {

// Whether judging this check needs percentiles the comparison did not keep exactly: the
// relative-error percentile of Polygraphy's rule always, unless the statistic is the max.
bool NeedsExactPercentiles(const OutputCheck& check) {
  const compare::TensorComparison& cmp = *check.comparison;
  const compare::ErrorStatKind kind = check.policy.check_error_stat.kind;
  const bool percentile =
      kind == compare::ErrorStatKind::kMedian || kind == compare::ErrorStatKind::kPercentile;
  return percentile && check.policy.check_error_stat.Quantile() != 100.0 && !cmp.exact &&
         cmp.values_compared && cmp.errors.compared > 0;
}

}  // namespace

void JudgeCheck(OutputCheck& check, const Tensor* source, const Tensor* target) {
  std::optional<compare::ErrorStatValues> exact_stat;
  if (source != nullptr && target != nullptr && NeedsExactPercentiles(check)) {
    exact_stat = compare::ComputeErrorPercentiles(*source, *target,
                                                  check.policy.check_error_stat.Quantile());
  }
  compare::Judgement judgement = compare::Judge(*check.comparison, check.policy, exact_stat);
  check.passed = judgement.passed;
  check.failures = std::move(judgement.failures);
  check.notes = std::move(judgement.notes);
  check.verdict_exact = judgement.exact;
  check.indeterminate = judgement.indeterminate;
  check.mismatches = judgement.mismatches;
  check.floors_undefined = std::move(judgement.floors_undefined);
  check.floor_multiple = judgement.floor_multiple;
}

OutputCheck CheckOutput(int sample, const std::string& output, const Tensor& source,
                        const Tensor* target, const compare::Policy& policy) {
  OutputCheck check;
  check.sample = sample;
  check.output = output;
  check.policy =
      policy.For(output, source.dtype(), target ? std::optional(target->dtype()) : std::nullopt);
  check.tolerance = check.policy.tolerance();
  if (target != nullptr) {
    check.comparison = compare::CompareTensors(source, *target, check.tolerance);
    JudgeCheck(check, &source, target);
  }
  return check;
}

namespace internal {

std::optional<DType> DTypeOfDescription(const std::string& description) {
  return ParseDType(description.substr(0, description.find('[')));
}

}  // namespace internal
}  // namespace convgate::gate
