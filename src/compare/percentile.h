// numpy.percentile's 'linear' method split into its two halves, shared by the exact selection in
// CompareTensors and the bracketed percentiles of ErrorHistogram.
#pragma once

#include <cstdint>

#include "convgate/compare/histogram.h"

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

// numpy's percentile from brackets of its two order statistics (`rank` from RankOf): exact (numpy's
// value bit for bit) when both are exact, otherwise widened by a few ulps so the interpolation's
// rounding never leaves the true value outside. NaN where numpy's interpolation gives NaN (an +Inf
// neighbour weighted 0).
Bracket<double> LerpBrackets(Bracket<double> lower, Bracket<double> upper,
                             const PercentileRank& rank);

}  // namespace convgate::compare::internal
