#include "hints.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "format.h"

namespace convgate::gate::internal {
namespace {

// A tolerance suggestion rounded up to two significant digits: short to type, and never rounded
// below the value that passes.
double RoundUp(double value) {
  if (!(value > 0.0) || !std::isfinite(value)) return value;
  const double unit = std::pow(10.0, std::floor(std::log10(value)) - 1);
  return std::ceil(value / unit) * unit;
}

void ToleranceHint(const std::string& output, const compare::TensorComparison& cmp,
                   const ToleranceToPass& needed, std::vector<std::string>& hints) {
  if (cmp.exact || cmp.mismatches == 0 || !cmp.values_compared) return;
  const int64_t finite_misses = cmp.mismatches - cmp.non_finite.introduced_nan -
                                cmp.non_finite.introduced_inf - cmp.non_finite.inherited;
  if (finite_misses <= 0) return;
  std::string hint = std::string(needed.samples > 1 ? "over all samples, " : "") +
                     "every finite element would pass with --atol " + output + ":" +
                     Number(RoundUp(needed.atol)) + " (keeping rtol " + Number(cmp.tolerance.rtol) +
                     ")";
  if (std::isfinite(needed.rtol)) {
    hint += " or --rtol " + output + ":" + Number(RoundUp(needed.rtol)) + " (keeping atol " +
            Number(cmp.tolerance.atol) + ")";
  }
  hints.push_back(hint + "; widen only if an error that large is acceptable for this output");
  if (cmp.mismatch_fraction >= 0.1) {
    hints.push_back(
        "the difference is widespread (10% of elements or more), not a few outliers: a "
        "systematic change (a weight, a scale, a precision drop) is more likely than rounding "
        "noise");
  } else {
    hints.push_back("only a few elements are affected: inspect the worst ones first");
  }
}

}  // namespace

std::vector<std::string> HintsFor(const std::string& output, const compare::TensorComparison& cmp,
                                  const ToleranceToPass& needed) {
  std::vector<std::string> hints;
  if (!cmp.shape_match) {
    hints.push_back("the target returns " + cmp.target_desc + " where the source returns " +
                    cmp.source_desc +
                    ": check the converter's dynamic axes, output layout and squeeze/flatten");
  }
  if (!cmp.dtype_match) {
    hints.push_back(
        "the output dtype changed: if intended (e.g. an fp16 conversion without keep-IO-types), "
        "judge the values with tolerances fit for that dtype (--atol/--rtol " +
        output + ":...)");
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
  ToleranceHint(output, cmp, needed, hints);
  return hints;
}

void AttachHints(std::vector<OutputCheck>& checks) {
  std::map<std::string, ToleranceToPass> needed;
  for (const OutputCheck& check : checks) {
    if (!check.comparison) continue;
    auto [it, inserted] = needed.try_emplace(check.output);
    ToleranceToPass& output = it->second;
    output.samples = inserted ? 1 : output.samples + 1;
    output.atol = std::max(output.atol, check.comparison->atol_to_pass);
    output.rtol = std::max(output.rtol, check.comparison->rtol_to_pass);
  }
  for (OutputCheck& check : checks) {
    if (check.passed || !check.comparison) continue;
    check.hints = HintsFor(check.output, *check.comparison, needed[check.output]);
  }
}

}  // namespace convgate::gate::internal
