// What a series of measured latencies says: its spread (min, percentiles, max) and how well its
// centre is known (95% intervals of the mean and of the median).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace convgate::bench {

struct LatencySummary {
  int64_t count = 0;
  double min_ms = 0.0;
  double p50_ms = 0.0;
  double p90_ms = 0.0;
  double p99_ms = 0.0;
  double max_ms = 0.0;
  double mean_ms = 0.0;
  double stddev_ms = 0.0;
  // The mean's 95% interval (mean +- 1.96 standard errors).
  double mean_low_ms = 0.0;
  double mean_high_ms = 0.0;
  // The median's 95% interval from order statistics (distribution-free: latencies are skewed, a
  // few slow runs must not widen the median's interval as they widen the mean's).
  double p50_low_ms = 0.0;
  double p50_high_ms = 0.0;
};

// Percentiles interpolate linearly between order statistics (numpy's default), so a reader can
// recompute them. An empty series gives a summary of zeros with count 0.
LatencySummary SummarizeLatencies(std::vector<double> ms);

// At most `most` of `series`' values, evenly spaced (every k-th when longer): for resampling and
// for the latencies a report keeps.
std::vector<double> ThinSeries(const std::vector<double>& series, size_t most);

// The q-th percentile (0..100) of `sorted` (ascending, not empty), interpolated linearly.
double PercentileOfSorted(const std::vector<double>& sorted, double q);

}  // namespace convgate::bench
