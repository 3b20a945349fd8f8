#include "gate/compare_hints.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "convgate/compare/judge.h"
#include "convgate/gate/judge.h"
#include "convgate/session/format.h"

namespace convgate::gate {
namespace internal {
namespace {

// A tolerance suggestion rounded up to two significant digits: short to type, and never rounded
// below the value that passes.
double RoundUp(double value) {
  if (!(value > 0.0) || !std::isfinite(value)) return value;
  const double unit = std::pow(10.0, std::floor(std::log10(value)) - 1);
  return std::ceil(value / unit) * unit;
}

// Finite elements outside the check's own tolerance: its judged count (a bracket when `check`
// recounted it) without the non-finite ones.
compare::Bracket<int64_t> FiniteMisses(const OutputCheck& check) {
  const compare::NonFiniteSplit& nf = check.comparison->non_finite;
  const int64_t non_finite = nf.introduced_nan + nf.introduced_inf + nf.inherited;
  return {std::max<int64_t>(check.mismatches.lo - non_finite, 0),
          std::max<int64_t>(check.mismatches.hi - non_finite, 0)};
}

void ToleranceHint(const OutputCheck& check, const ToleranceToPass& needed,
                   std::vector<std::string>& hints) {
  const compare::TensorComparison& cmp = *check.comparison;
  if (cmp.exact || !cmp.values_compared || FiniteMisses(check).hi == 0) return;
  const std::string& output = check.output;
  std::string hint = std::string(needed.samples > 1 ? "over all samples, " : "") +
                     "every finite element would pass with --atol " + output + ":" +
                     session::Number(RoundUp(needed.atol)) + " (keeping rtol " +
                     session::Number(check.policy.rtol) + ")";
  if (std::isfinite(needed.rtol)) {
    hint += " or --rtol " + output + ":" + session::Number(RoundUp(needed.rtol)) +
            " (keeping atol " + session::Number(check.policy.atol) + ")";
  }
  hints.push_back(hint + "; widen only if an error that large is acceptable for this output");
}

// How widespread the misses are, when the count says so for sure.
void SpreadHint(const OutputCheck& check, std::vector<std::string>& hints) {
  const compare::Bracket<int64_t> misses = FiniteMisses(check);
  const double elements = static_cast<double>(check.comparison->num_elements);
  if (misses.hi == 0) return;
  if (static_cast<double>(misses.lo) >= 0.1 * elements) {
    hints.push_back(
        "the difference is widespread (10% of elements or more), not a few outliers: a "
        "systematic change (a weight, a scale, a precision drop) is more likely than rounding "
        "noise");
  } else if (static_cast<double>(misses.hi) < 0.1 * elements) {
    hints.push_back("only a few elements are affected: inspect the worst ones first");
  }
}

}  // namespace

std::vector<std::string> HintsFor(const OutputCheck& check, const ToleranceToPass& needed) {
  std::vector<std::string> hints;
  const compare::TensorComparison& cmp = *check.comparison;
  if (!cmp.shape_match) {
    hints.push_back("the target returns " + cmp.target_desc + " where the source returns " +
                    cmp.source_desc +
                    ": check the converter's dynamic axes, output layout and squeeze/flatten");
  }
  const bool dtype_failed = std::any_of(
      check.failures.begin(), check.failures.end(),
      [](const std::string& failure) { return failure.rfind("dtype mismatch:", 0) == 0; });
  if (dtype_failed) {
    hints.push_back(
        "the output dtype changed: a floating-point width change (an fp16 conversion without "
        "keep-IO-types) is compared by value unless --strict-dtype; an integer, bool or string "
        "change is a different output: check the converter's casts");
  }
  const compare::NonFiniteSplit& nf = cmp.non_finite;
  if (nf.introduced_nan + nf.introduced_inf > 0) {
    hints.push_back(
        "the target produces NaN/Inf where the source is finite: typical causes are an fp16 "
        "overflow, a division by zero or log/sqrt of a negative number the source avoided, or a "
        "corrupted normalization constant; `convgate run TARGET` shows whether it happens alone");
  }
  if (nf.inherited > 0 || nf.shared_nan + nf.shared_inf > 0) {
    hints.push_back(
        "the source itself produces NaN/Inf on these inputs: check the inputs (--val-range, "
        "--load-inputs with real data) before trusting either side");
  }
  ToleranceHint(check, needed, hints);
  if (!cmp.exact && cmp.values_compared) SpreadHint(check, hints);
  return hints;
}

}  // namespace internal

void AttachHints(std::vector<OutputCheck>& checks) {
  std::map<std::string, internal::ToleranceToPass> needed;
  for (const OutputCheck& check : checks) {
    if (!check.comparison) continue;
    auto [it, inserted] = needed.try_emplace(check.output);
    internal::ToleranceToPass& output = it->second;
    output.samples = inserted ? 1 : output.samples + 1;
    const compare::TolerancesToPass here =
        compare::TolerancesToPassUnder(*check.comparison, check.policy.tolerance());
    output.atol = std::max(output.atol, here.atol);
    output.rtol = std::max(output.rtol, here.rtol);
  }
  for (OutputCheck& check : checks) {
    if (check.passed || !check.comparison) continue;
    check.hints = internal::HintsFor(check, needed[check.output]);
  }
}

}  // namespace convgate::gate
