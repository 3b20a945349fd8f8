// numpy.percentile's 'linear' method split into its two halves, shared by the exact selection in
// CompareTensors and the bracketed percentiles of ErrorHistogram.
#pragma once

#include <cstdint>

namespace convgate::compare::internal {

// The two order statistics numpy blends for percentile q of `count` values, and the weight of
// the upper one. REQUIRES: count > 0, 0 <= q <= 100.
struct PercentileRank {
  int64_t lower;  // floor of the virtual index (count - 1) * q / 100
  int64_t upper;  // lower + 1, clipped to count - 1
  double gamma;   // weight of upper; 0 when upper == lower
};
PercentileRank RankOf(int64_t count, double q);

// numpy's _lerp(a, b, t), both branches, so results match bit for bit.
double NumpyLerp(double a, double b, double t);

}  // namespace convgate::compare::internal
