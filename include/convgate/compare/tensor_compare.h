// Compares one target tensor with one source tensor under a Tolerance and returns every statistic
// the report needs. A tolerance miss is data, not an error: the result carries the verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// Non-finite values, split by where they come from (DESIGN.md, "Comparison semantics"):
//   introduced: non-finite in the target where the source is finite  -> always a failure
//   inherited:  non-finite in the source where the target differs    -> a mismatch; the source itself
//               is unstable
//   shared:     the same non-finite value on both sides (NaN/NaN, +Inf/+Inf) -> equal, but reported
struct NonFiniteSplit {
  int64_t introduced_nan = 0;
  int64_t introduced_inf = 0;
  int64_t inherited = 0;
  int64_t shared_nan = 0;
  int64_t shared_inf = 0;
  int64_t first_introduced = -1;  // flat index, -1 when none
  int64_t first_inherited = -1;
};

struct ElementReport {
  int64_t flat = -1;  // -1 when there is no such element
  std::vector<int64_t> index;
  double source = 0.0;
  double target = 0.0;
  double abs_error = 0.0;
  double rel_error = 0.0;
  double allowed = 0.0;  // atol + rtol * |s| at this element
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

struct TensorComparison {
  // Structure.
  std::string source_desc;  // "float32[1, 10]"
  std::string target_desc;
  bool dtype_match = true;
  bool shape_match = true;
  bool values_compared = false;  // false when shapes disagree in element count
  bool exact = false;            // integer/bool comparison: tolerances not used

  Tolerance tolerance;
  int64_t num_elements = 0;
  ValueSummary source_values;
  ValueSummary target_values;
  NonFiniteSplit non_finite;
  ErrorStats errors;
  // Elements failing the tolerance (including introduced and inherited non-finite values).
  int64_t mismatches = 0;
  double mismatch_fraction = 0.0;
  // The element that exceeds its allowance by the largest factor |t - s| / allowed (-1 when none
  // fails). Names the place to look first.
  ElementReport worst;

  bool passed = false;
  // Why it failed, one sentence each, most important first ("dtype mismatch: source float32,
  // target float16", "introduced NaN: 3 of 10 elements, first at [0, 2]",
  // "12 of 1000 elements (1.2%) outside atol 1e-05 + rtol 0.001 * |source|; worst at [0, 7]: ...").
  std::vector<std::string> failures;
};

// Source is the reference. Never fails: structural problems are reported in the result.
TensorComparison CompareTensors(const Tensor& source, const Tensor& target,
                                const Tolerance& tolerance);

// numpy.percentile(values, q) with the default 'linear' method. Reorders `values`.
// REQUIRES: !values.empty(), 0 <= q <= 100.
double Percentile(std::vector<double>& values, double q);

}  // namespace convgate::compare
