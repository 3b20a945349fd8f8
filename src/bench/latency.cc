#include "convgate/bench/latency.h"

#include <algorithm>
#include <cmath>

namespace convgate::bench {
namespace {

constexpr double kZ95 = 1.959963984540054;

}  // namespace

std::vector<double> ThinSeries(const std::vector<double>& series, size_t most) {
  if (series.size() <= most) return series;
  std::vector<double> kept;
  kept.reserve(most);
  const double step = static_cast<double>(series.size()) / static_cast<double>(most);
  for (size_t i = 0; i < most; ++i) {
    kept.push_back(series[static_cast<size_t>(static_cast<double>(i) * step)]);
  }
  return kept;
}

double PercentileOfSorted(const std::vector<double>& sorted, double q) {
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

LatencySummary SummarizeLatencies(std::vector<double> ms) {
  LatencySummary summary;
  if (ms.empty()) return summary;
  std::sort(ms.begin(), ms.end());
  const double n = static_cast<double>(ms.size());
  summary.count = static_cast<int64_t>(ms.size());
  summary.min_ms = ms.front();
  summary.max_ms = ms.back();
  summary.p50_ms = PercentileOfSorted(ms, 50);
  summary.p90_ms = PercentileOfSorted(ms, 90);
  summary.p99_ms = PercentileOfSorted(ms, 99);
  double sum = 0.0;
  for (double value : ms) sum += value;
  summary.mean_ms = sum / n;
  double squares = 0.0;
  for (double value : ms) squares += (value - summary.mean_ms) * (value - summary.mean_ms);
  summary.stddev_ms = ms.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  const double half = kZ95 * summary.stddev_ms / std::sqrt(n);
  summary.mean_low_ms = summary.mean_ms - half;
  summary.mean_high_ms = summary.mean_ms + half;
  // Ranks n/2 -+ 1.96 sqrt(n)/2 bracket the median with 95% confidence (the binomial's normal
  // approximation), clamped to the series.
  const double spread = kZ95 * std::sqrt(n) / 2.0;
  const double low_rank = std::floor(n / 2.0 - spread);
  const double high_rank = std::ceil(n / 2.0 + spread);
  summary.p50_low_ms = ms[static_cast<size_t>(std::clamp(low_rank, 0.0, n - 1))];
  summary.p50_high_ms = ms[static_cast<size_t>(std::clamp(high_rank, 0.0, n - 1))];
  return summary;
}

}  // namespace convgate::bench
