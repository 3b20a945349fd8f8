// Judging: one output's measurements (a TensorComparison) held to its OutputPolicy. Separate from
// computing, so `convgate check` can re-judge a saved report under a new policy.
//
// Rules (docs/policy.md):
//   - dtype, shape and element-count mismatches fail, whatever the policy;
//   - introduced NaN/Inf (non-finite in the target only) fail, whatever the policy;
//   - elementwise (default): an element passes when |t - s| <= atol + rtol * |s|; the output
//     passes when (elements outside) / num_elements * 1e6 <= mismatch_ppm. Inherited non-finite
//     elements count as outside;
//   - a statistic S (max, mean, median, pNN of the errors over finite pairs): the output passes
//     when S(|t - s|) <= atol OR S(rel error) <= rtol. This is Polygraphy's rule for
//     --check-error-stat (CompareFunc.simple). Inherited non-finite elements, which no statistic of
//     finite errors sees, are held to mismatch_ppm;
//   - integer, bool and string outputs compare exactly: tolerances and statistics do not apply,
//     mismatch_ppm does;
//   - min_cosine and min_snr_db apply on top, to floating comparisons with finite pairs.
//
// A value the comparison did not keep exactly (a percentile outside kPercentiles, a relative-error
// percentile, a mismatch count under a new atol/rtol) is read from the comparison's ErrorSummary
// (error_summary.h) as a bracket. A bracket on one side of its threshold decides; one that
// straddles it makes the verdict indeterminate, which fails with a sentence saying so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "convgate/compare/policy.h"
#include "convgate/compare/tensor_compare.h"
#include "convgate/core/tensor.h"

namespace convgate::compare {

struct Judgement {
  bool passed = false;
  // A threshold lies inside the bracket of the value held to it: the stored summary cannot
  // decide. Counted as a failure.
  bool indeterminate = false;
  // Every value a rule used was exact. When false the verdict came from summary brackets (still
  // certain unless indeterminate).
  bool exact = true;
  // Elements outside the judged tolerance (introduced and inherited non-finite ones included):
  // the comparison's own count, or a bracket recounted from the error summary when `check`
  // judges under a different atol/rtol.
  Bracket<int64_t> mismatches;
  // Why it failed, one sentence each: the comparison's dtype / shape / introduced NaN / Inf
  // sentences, then the policy's rules ("p99 |diff| 0.0031 > atol 0.001 and p99 rel 0.02 > rtol
  // 0.01 (--check-error-stat p99)", "1250 ppm of elements outside tolerance > allowed 100 ppm",
  // "cosine 0.9981 < min 0.999", "SNR 31.2 dB < min 40 dB").
  std::vector<std::string> failures;
  // Observations that do not fail: mismatches within mismatch_ppm, a statistic judged in place of
  // elementwise mismatches, floors that do not apply.
  std::vector<std::string> notes;
  // Why cosine and SNR are undefined for this output, or empty: the source's energy is within the
  // absolute tolerance's reach (max |source| <= atol), so the error has nothing to be measured
  // against. min_cosine and min_snr_db never fail such an output.
  std::string floors_undefined;
  // The largest |diff| as a multiple of the output's noise floor (policy.noise_floor), when the
  // comparison was calibrated and the floor is above zero.
  std::optional<double> floor_multiple;
};

// Exact values of a percentile policy's statistic (ComputeErrorPercentiles), for a caller that
// still has the tensors.
struct ErrorStatValues {
  double abs_error = 0.0;
  double rel_error = 0.0;
};

// Never fails; a tolerance miss is data. `exact_stat`, when given, holds the exact values of
// policy.check_error_stat for a median or pNN policy.
Judgement Judge(const TensorComparison& comparison, const OutputPolicy& policy,
                const std::optional<ErrorStatValues>& exact_stat = std::nullopt);

// The smallest tolerances under which every finite pair of a comparison passes, each with the
// other tolerance kept (TensorComparison::atol_to_pass, rtol_to_pass): what the hints suggest.
struct TolerancesToPass {
  double atol = 0.0;
  double rtol = 0.0;  // +Inf when no rtol can absorb an error (|s| = 0)
};

// TolerancesToPass under `tolerance` (its rtol kept for atol, its atol for rtol), as upper bounds
// the comparison's own error summary proves, so `convgate check` decides what it suggests: from
// the frontier (within 0.1% of the exact figures); without one, the exact figures when `tolerance`
// is the one the comparison counted at, else max|t - s| for atol and +Inf for rtol.
TolerancesToPass TolerancesToPassUnder(const TensorComparison& comparison,
                                       const Tolerance& tolerance);

// numpy.percentile(errors, q) ('linear') of |t - s| and of |t - s| / max(|s|, kRelErrorFloor)
// over the element pairs where both sides are finite, flattened row-major as CompareTensors pairs
// them. nullopt when no pair is finite. REQUIRES: equal element counts, numeric dtypes (no
// strings), 0 <= q <= 100. Memory: two doubles per element.
std::optional<ErrorStatValues> ComputeErrorPercentiles(const Tensor& source, const Tensor& target,
                                                       double q);

}  // namespace convgate::compare
