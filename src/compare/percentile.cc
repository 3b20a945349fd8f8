// numpy.percentile with method='linear' (numpy 1.22+, numpy/lib/function_base.py): the virtual
// index is (n - 1) * (q / 100), and the two neighbouring order statistics are blended with numpy's
// _lerp, whose second branch (b - (b - a) * (1 - t) for t >= 0.5) we copy so results match bit for
// bit, not just to rounding.
#include "compare/percentile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "convgate/compare/tensor_compare.h"

namespace convgate::compare {
namespace internal {

PercentileRank RankOf(int64_t count, double q) {
  const double virtual_index = static_cast<double>(count - 1) * (q / 100.0);
  if (virtual_index >= static_cast<double>(count - 1)) return {count - 1, count - 1, 0.0};
  const double floor_index = std::floor(virtual_index);
  const auto lower = static_cast<int64_t>(floor_index);
  return {lower, lower + 1, virtual_index - floor_index};
}

double NumpyLerp(double a, double b, double t) {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

Bracket<double> LerpBrackets(Bracket<double> lower, Bracket<double> upper,
                             const PercentileRank& rank) {
  // Weight 0 on a finite upper neighbour: numpy's result is the lower value itself.
  if (rank.gamma == 0.0 && std::isfinite(upper.hi)) return lower;
  const double lo = NumpyLerp(lower.lo, upper.lo, rank.gamma);
  const double hi = NumpyLerp(lower.hi, upper.hi, rank.gamma);
  if (lower.exact() && upper.exact()) return {lo, hi};
  // The interpolation is monotone in both neighbours in real arithmetic, but its rounding is not
  // quite (a + (b - a) * t can lose an ulp when a grows): 4 ulps cover both roundings with margin.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double low = lo;
  double high = hi;
  for (int step = 0; step < 4; ++step) {
    low = std::nextafter(low, -kInf);
    high = std::nextafter(high, kInf);
  }
  return {std::max(low, 0.0), high};
}

}  // namespace internal

double Percentile(std::vector<double>& values, double q) {
  double result = 0.0;
  Percentiles(values, std::span<const double>(&q, 1), std::span<double>(&result, 1));
  return result;
}

void Percentiles(std::vector<double>& values, std::span<const double> q, std::span<double> out) {
  std::vector<size_t> order(q.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return q[a] < q[b]; });
  // Ranks are visited in ascending order. After nth_element puts rank r in place, everything at
  // [r + 1, end) is the set of larger elements, so the next selection only partitions that suffix:
  // k percentiles cost about one selection over n plus shrinking ones, never a full sort.
  size_t settled = 0;  // ranks below this are already in place
  auto select = [&](size_t rank) {
    if (rank >= settled) {
      std::nth_element(values.begin() + static_cast<ptrdiff_t>(settled),
                       values.begin() + static_cast<ptrdiff_t>(rank), values.end());
      settled = rank + 1;
    }
    return values[rank];
  };
  for (size_t idx : order) {
    const internal::PercentileRank rank =
        internal::RankOf(static_cast<int64_t>(values.size()), q[idx]);
    const double lower = select(static_cast<size_t>(rank.lower));
    const double upper = select(static_cast<size_t>(rank.upper));
    out[idx] = internal::NumpyLerp(lower, upper, rank.gamma);
  }
}

}  // namespace convgate::compare
