#include "convgate/bench/latency.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace convgate::bench {
namespace {

TEST(LatencyTest, PercentilesInterpolateAsNumpyDoes) {
  // numpy.percentile([4, 1, 3, 2, 10], [50, 90, 99]) = [3.0, 7.6, 9.76]
  const LatencySummary s = SummarizeLatencies({4, 1, 3, 2, 10});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 10);
  EXPECT_DOUBLE_EQ(s.p50_ms, 3.0);
  EXPECT_NEAR(s.p90_ms, 7.6, 1e-12);
  EXPECT_NEAR(s.p99_ms, 9.76, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean_ms, 4.0);
  // numpy.std([4, 1, 3, 2, 10], ddof=1) = 3.5355339059327378
  EXPECT_NEAR(s.stddev_ms, 3.5355339059327378, 1e-12);
  EXPECT_NEAR(s.mean_high_ms - s.mean_ms, 1.959963984540054 * 3.5355339059327378 / std::sqrt(5.0),
              1e-9);
}

TEST(LatencyTest, MedianIntervalBracketsTheMedianAndNarrowsWithMoreRuns) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> skewed(0.0, 0.3);
  std::vector<double> few, many;
  for (int i = 0; i < 30; ++i) few.push_back(skewed(rng));
  for (int i = 0; i < 3000; ++i) many.push_back(skewed(rng));
  const LatencySummary a = SummarizeLatencies(few), b = SummarizeLatencies(many);
  for (const LatencySummary& s : {a, b}) {
    EXPECT_LE(s.p50_low_ms, s.p50_ms);
    EXPECT_GE(s.p50_high_ms, s.p50_ms);
    EXPECT_LE(s.mean_low_ms, s.mean_ms);
  }
  EXPECT_LT(b.p50_high_ms - b.p50_low_ms, (a.p50_high_ms - a.p50_low_ms) / 3);
  // The true median of lognormal(0, 0.3) is 1: the interval of 3000 runs holds it.
  EXPECT_LT(b.p50_low_ms, 1.0);
  EXPECT_GT(b.p50_high_ms, 1.0);
}

TEST(LatencyTest, SlowOutliersMoveTheMeanNotTheMedianInterval) {
  std::vector<double> runs(200, 1.0);
  for (int i = 0; i < 200; ++i) runs[i] += 0.001 * i;
  const LatencySummary clean = SummarizeLatencies(runs);
  runs[10] = runs[20] = 500.0;  // two stalls
  const LatencySummary stalled = SummarizeLatencies(runs);
  EXPECT_GT(stalled.mean_ms, clean.mean_ms * 2);
  EXPECT_NEAR(stalled.p50_high_ms, clean.p50_high_ms, 0.01);
  EXPECT_DOUBLE_EQ(stalled.max_ms, 500.0);
}

TEST(LatencyTest, EmptyAndSingleSeries) {
  EXPECT_EQ(SummarizeLatencies({}).count, 0);
  const LatencySummary one = SummarizeLatencies({2.5});
  EXPECT_DOUBLE_EQ(one.p50_ms, 2.5);
  EXPECT_DOUBLE_EQ(one.p50_low_ms, 2.5);
  EXPECT_DOUBLE_EQ(one.p50_high_ms, 2.5);
  EXPECT_DOUBLE_EQ(one.stddev_ms, 0.0);
}

}  // namespace
}  // namespace convgate::bench
