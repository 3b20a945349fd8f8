#include "convgate/bench/speed.h"

#include <gtest/gtest.h>

#include <random>

namespace convgate::bench {
namespace {

// `n` latencies around `median` ms with 5% multiplicative noise.
std::vector<double> Runs(double median, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, 0.05);
  std::vector<double> runs;
  for (int i = 0; i < n; ++i) runs.push_back(median * noise(rng));
  return runs;
}

bool Mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(SpeedTest, TwiceAsFastIsBeyondNoiseAndMeetsTheGate) {
  const SpeedComparison speed =
      CompareSpeed(Runs(10, 200, 1), Runs(5, 200, 2), SpeedGate{.min_speedup = 1.5});
  EXPECT_NEAR(speed.speedup, 2.0, 0.1);
  EXPECT_LT(speed.speedup_low, speed.speedup);
  EXPECT_GT(speed.speedup_high, speed.speedup);
  EXPECT_TRUE(speed.beyond_noise);
  EXPECT_TRUE(speed.passed);
  EXPECT_TRUE(Mentions(speed.passes, "--min-speedup 1.5: met"));
  EXPECT_NE(DescribeSpeedup(speed).find("faster"), std::string::npos);
}

TEST(SpeedTest, SlowerTargetFailsMaxSlowdownSayingByHowMuch) {
  const SpeedComparison speed =
      CompareSpeed(Runs(5, 200, 1), Runs(10, 200, 2), SpeedGate{.max_slowdown = 1.1});
  EXPECT_NEAR(speed.speedup, 0.5, 0.03);
  EXPECT_FALSE(speed.passed);
  ASSERT_EQ(speed.failures.size(), 1u);
  EXPECT_NE(speed.failures[0].find("x slower ("), std::string::npos) << speed.failures[0];
  EXPECT_NE(speed.failures[0].find("over by 1.8"), std::string::npos) << speed.failures[0];
}

TEST(SpeedTest, SameSpeedIsWithinNoiseAndAGateOnTheEdgeDoesNotFail) {
  const SpeedComparison speed = CompareSpeed(Runs(10, 50, 1), Runs(10, 50, 2),
                                             SpeedGate{.min_speedup = 1.02, .max_slowdown = 1.0});
  EXPECT_FALSE(speed.beyond_noise);
  EXPECT_LT(speed.speedup_low, 1.0);
  EXPECT_GT(speed.speedup_high, 1.0);
  // Neither threshold is beyond the interval: not failed, and said so.
  EXPECT_TRUE(speed.passed) << (speed.failures.empty() ? "" : speed.failures[0]);
  EXPECT_NE(DescribeSpeedup(speed).find("as fast within noise"), std::string::npos);
}

TEST(SpeedTest, ClearShortfallFailsMinSpeedup) {
  const SpeedComparison speed =
      CompareSpeed(Runs(10, 200, 1), Runs(8, 200, 2), SpeedGate{.min_speedup = 1.5});
  EXPECT_FALSE(speed.passed);
  EXPECT_TRUE(Mentions(speed.failures, "--min-speedup 1.5 wants 1.5x"));
}

TEST(SpeedTest, DriftWithinASideWidensTheInterval) {
  std::vector<double> steady = Runs(10, 200, 1);
  std::vector<double> drifting = steady;
  // The machine slowed down by 30% halfway through the source's run.
  for (size_t i = 100; i < drifting.size(); ++i) drifting[i] *= 1.3;
  const SpeedComparison calm = CompareSpeed(steady, Runs(10, 200, 2), {});
  const SpeedComparison drift = CompareSpeed(drifting, Runs(10, 200, 2), {});
  EXPECT_GT(drift.block_drift, 0.2);
  EXPECT_GT(drift.speedup_high - drift.speedup_low, 2 * (calm.speedup_high - calm.speedup_low));
}

TEST(SpeedTest, DeterministicForASeed) {
  const std::vector<double> a = Runs(3, 100, 1), b = Runs(4, 100, 2);
  const SpeedComparison x = CompareSpeed(a, b, {}, 9), y = CompareSpeed(a, b, {}, 9);
  EXPECT_EQ(x.speedup_low, y.speedup_low);
  EXPECT_EQ(x.speedup_high, y.speedup_high);
}

}  // namespace
}  // namespace convgate::bench
