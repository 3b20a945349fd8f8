// Compares one target tensor with one source tensor under a Tolerance and returns every statistic
// the report needs. A tolerance miss is data, not an error: the result carries the verdict.
#pragma once

#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "convgate/compare/error_summary.h"
#include "convgate/compare/histogram.h"
#include "convgate/compare/tolerance.h"
#include "convgate/core/tensor.h"

namespace convgate::compare {

// Relative errors are |t - s| / max(|s|, kRelErrorFloor): finite even where the source is 0.
inline constexpr double kRelErrorFloor = 1e-12;

// Percentiles of the absolute error reported, numpy's default 'linear' method.
inline constexpr double kPercentiles[] = {50.0, 75.0, 90.0, 99.0, 99.5};

struct ValueSummary {
  double min = 0.0;  // over finite values; 0 when there are none
  double max = 0.0;
  double mean = 0.0;
  int64_t finite = 0;
  int64_t nan = 0;
  int64_t pos_inf = 0;
  int64_t neg_inf = 0;
};

// Non-finite values, split by where they come from (docs/policy.md):
//   introduced: non-finite in the target where the source is finite: always a failure.
//   inherited:  non-finite in the source where the target differs: a mismatch, reported as the
//               source itself being unstable. A source +Inf against a target NaN is inherited.
//   shared:     the same non-finite value on both sides (NaN/NaN, +Inf/+Inf, -Inf/-Inf): equal,
//               not a mismatch, but counted and noted.
struct NonFiniteSplit {
  int64_t introduced_nan = 0;
  int64_t introduced_inf = 0;  // +Inf and -Inf
  int64_t inherited = 0;
  int64_t shared_nan = 0;
  int64_t shared_inf = 0;
  // Flat indices, -1 when none. first_introduced is the earlier of the two kinds.
  int64_t first_introduced = -1;
  int64_t first_introduced_nan = -1;
  int64_t first_introduced_inf = -1;
  int64_t first_inherited = -1;
};

// One element, located in the source's shape (the reference; when shapes differ but element counts
// agree, elements are paired in row-major order).
struct ElementReport {
  int64_t flat = -1;  // -1 when there is no such element
  std::vector<int64_t> index;
  // As double: int64/uint64 beyond 2^53 round here; failure messages print such values exactly.
  double source = 0.0;
  double target = 0.0;
  double abs_error = 0.0;  // |t - s|; NaN or Inf for a non-finite element
  double rel_error = 0.0;  // abs_error / max(|s|, kRelErrorFloor)
  double allowed = 0.0;    // atol + rtol * |s| at this element; 0 for an exact comparison
  // String tensors only: the two elements as stored (the numbers above then stay 0).
  std::string source_text;
  std::string target_text;
};

struct ErrorStats {
  int64_t compared = 0;  // elements where both sides are finite (statistics below cover these)
  double max_abs_error = 0.0;
  double mean_abs_error = 0.0;
  double max_rel_error = 0.0;
  double mean_rel_error = 0.0;
  double abs_error_percentiles[std::size(kPercentiles)] = {};
  ElementReport max_abs;  // the element with the largest |t - s|
};

// Whole-tensor agreement metrics over the finite pairs (all 0 when none). Definitions, with
// e = t - s summed over finite pairs:
//   rmse    = sqrt(mean(e^2))
//   nmse    = sum(e^2) / sum(s^2)                   (Inf when sum(s^2) = 0 < sum(e^2); 0 if both 0)
//   cosine  = sum(s*t) / sqrt(sum(s^2) * sum(t^2))  (1 when both sides are all zero; 0 when one is)
//   snr_db  = 10 * log10(sum(s^2) / sum(e^2))       (+Inf when e = 0 everywhere)
//   psnr_db = 10 * log10(peak^2 / mean(e^2)), peak = max|s| (+Inf when e = 0 everywhere)
struct Metrics {
  double rmse = 0.0;
  double nmse = 0.0;
  double cosine = 0.0;
  double snr_db = 0.0;
  double psnr_db = 0.0;
  double peak = 0.0;  // max |s| over finite pairs
};

struct TensorComparison {
  // Structure.
  std::string source_desc;  // "float32[1, 10]"
  std::string target_desc;
  bool dtype_match = true;
  bool shape_match = true;
  bool values_compared = false;  // false when shapes disagree in element count
  // Both dtypes are integer or bool: elements compare exactly in the integer domain (int64/uint64
  // beyond 2^53 included) and the tolerances are not used. When only one side is an integer type
  // the comparison uses the tolerances in double. Both dtypes string: elements compare as exact
  // byte strings (no Unicode normalization, no case folding).
  bool exact = false;

  Tolerance tolerance;
  int64_t num_elements = 0;
  ValueSummary source_values;
  ValueSummary target_values;
  NonFiniteSplit non_finite;
  ErrorStats errors;
  Metrics metrics;
  // The compact error summary report.json keeps for re-judging (error_summary.h).
  ErrorSummary summary;
  // Elements failing the tolerance (or unequal, when exact), including introduced and inherited
  // non-finite values; mismatch_fraction = mismatches / num_elements (0 when empty).
  int64_t mismatches = 0;
  double mismatch_fraction = 0.0;
  // The failing element to look at first (flat -1 when none fails), in this order of precedence:
  //   1. the first introduced NaN/Inf;
  //   2. the finite element exceeding its allowance by the largest factor |t - s| / allowed
  //      (an element allowed 0 counts as an infinite factor, ties go to the larger |t - s|, then
  //      to the lower index); for an exact comparison, the largest |t - s|;
  //   3. the first inherited non-finite element.
  // For strings: the first unequal element, with source_text and target_text set.
  ElementReport worst;

  // The smallest tolerances under which every finite element would pass, each with the other
  // tolerance kept: atol_to_pass = max(|t - s| - rtol * |s|, 0) and rtol_to_pass =
  // max((|t - s| - atol) / |s|, 0) over finite pairs (Inf when an element with s = 0 exceeds atol,
  // which no rtol can absorb). 0 for exact comparisons. They turn a failure into a concrete
  // --atol/--rtol suggestion, so a reader can judge whether that much error is acceptable.
  double atol_to_pass = 0.0;
  double rtol_to_pass = 0.0;

  bool passed = false;  // failures.empty()
  // Why it failed, one sentence each, in this order: dtype mismatch, shape mismatch, introduced
  // NaN, introduced Inf, values outside the tolerance, inherited non-finite. For example
  //   "dtype mismatch: source float32, target float16"
  //   "introduced NaN: 3 of 10 elements (30%) are NaN in the target where the source is finite;
  //    first at [0, 2] (source 0.5)"
  //   "12 of 1000 elements (1.2%) outside atol 1e-05 + rtol 0.001 * |source|; worst at [0, 7]:
  //    source 0.5012, target 0.5123 (|diff| 0.0111, allowed 0.000511)"
  //   "2 of 6 strings (33.3%) differ; first at [1]: source "monday", target "MONDAY""
  std::vector<std::string> failures;
  // Observations that do not fail the check, one sentence each ("shared NaN: 3 of 10 elements
  // (30%) are NaN in both source and target (treated as equal)").
  std::vector<std::string> notes;
};

// How CompareTensors runs: results are bit-identical for any options, except that `summary` is
// left empty when error_summary is false.
struct CompareOptions {
  // Worker threads for tensors of at least min_parallel_elements; 0 means
  // std::thread::hardware_concurrency().
  int threads = 0;
  // Below this many elements everything runs on the calling thread: starting and joining threads
  // (tens of microseconds) is then a noticeable share of a pass that takes about a millisecond.
  int64_t min_parallel_elements = int64_t{1} << 20;
  // Exact percentiles hold at most this many |t - s| values at once (8 bytes each, so 64 MiB):
  // the ones in the histogram buckets around the wanted ranks. Buckets holding more are narrowed
  // by one more pass over the tensors first. Enough for a single pass on ~10^9 elements of noise.
  int64_t selection_scratch_values = int64_t{1} << 23;
  // Build TensorComparison::summary, the re-judging summary report.json keeps. A caller that
  // keeps only the statistics and the verdict at the comparison's own tolerance (per-node
  // validation) skips it: its frontier pass reads both tensors up to three more times, about as
  // long as everything else together on a widespread failure.
  bool error_summary = true;
};

// Source is the reference. Never fails: structural problems are reported in the result. Values are
// compared (flattened, row-major) whenever the element counts agree, even if dtype or shape differ,
// except that strings are never compared with numbers (a dtype mismatch, values_compared false).
// String against string counts unequal elements as mismatches; errors, value summaries,
// non-finite counts and the tolerances to pass all stay 0.
// Memory: per thread, fixed-size chunk buffers and the histograms (KiBs to a few MiB), plus the
// percentile selection's bounded scratch (CompareOptions); nothing per element. Time: one pass
// over both tensors for every statistic and the histograms, then usually one more that reads them
// again to select the exact percentiles.
TensorComparison CompareTensors(const Tensor& source, const Tensor& target,
                                const Tolerance& tolerance);
TensorComparison CompareTensors(const Tensor& source, const Tensor& target,
                                const Tolerance& tolerance, const CompareOptions& options);

// Min/max/mean over finite values and NaN/Inf counts of one tensor (the run gate's summary).
// All zero for a string tensor: strings have no numeric value and are never NaN or Inf.
ValueSummary SummarizeValues(const Tensor& tensor);

// numpy.percentile(values, q) with the default 'linear' method, bit-for-bit (same interpolation
// formula). Reorders `values`. REQUIRES: !values.empty(), values has no NaN, 0 <= q <= 100.
double Percentile(std::vector<double>& values, double q);
// Several percentiles with one sequence of partial selections (no full sort): out[i] is
// Percentile(values, q[i]). Reorders `values`. REQUIRES: as Percentile, q.size() == out.size().
void Percentiles(std::vector<double>& values, std::span<const double> q, std::span<double> out);

}  // namespace convgate::compare
