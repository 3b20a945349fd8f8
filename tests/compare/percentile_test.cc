// Percentile and the small internal helpers of the compare module.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "compare/accumulator.h"
#include "compare/messages.h"
#include "convgate/compare/tensor_compare.h"

namespace convgate::compare {
namespace {

// Expected values from numpy.percentile (numpy 1.24, method='linear').
TEST(Percentile, MatchesNumpyLinear) {
  std::vector<double> values = {4, 1, 3, 2};
  EXPECT_EQ(Percentile(values, 0), 1.0);
  EXPECT_EQ(Percentile(values, 50), 2.5);
  EXPECT_EQ(Percentile(values, 75), 3.25);
  EXPECT_EQ(Percentile(values, 100), 4.0);
  std::vector<double> eleven = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  EXPECT_EQ(Percentile(eleven, 99.5), 9.95);
  EXPECT_EQ(Percentile(eleven, 90), 9.0);
}

TEST(Percentile, SingleElementAndTies) {
  std::vector<double> one = {0.25};
  EXPECT_EQ(Percentile(one, 50), 0.25);
  EXPECT_EQ(Percentile(one, 99.5), 0.25);
  std::vector<double> ties = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  EXPECT_EQ(Percentile(ties, 50), 1.0);
  EXPECT_DOUBLE_EQ(Percentile(ties, 99), 1.91);
}

// Several percentiles in any order equal the one-at-a-time results.
TEST(Percentile, ManyAtOnceEqualsOneAtATime) {
  std::vector<double> values;
  for (int idx = 0; idx < 1000; ++idx) values.push_back((idx * 7919) % 1009 / 8.0);
  const double q[] = {99.5, 50, 0, 75, 99, 90, 50, 100};
  double many[std::size(q)];
  std::vector<double> scratch = values;
  Percentiles(scratch, q, many);
  for (size_t idx = 0; idx < std::size(q); ++idx) {
    std::vector<double> copy = values;
    EXPECT_EQ(many[idx], Percentile(copy, q[idx])) << q[idx];
  }
}

TEST(FormatPercent, ThreeDigitsNeverRoundedToWhole) {
  EXPECT_EQ(internal::FormatPercent(12, 1000), "1.2");
  EXPECT_EQ(internal::FormatPercent(3, 10), "30");
  EXPECT_EQ(internal::FormatPercent(1, 3), "33.3");
  EXPECT_EQ(internal::FormatPercent(10, 10), "100");
  EXPECT_EQ(internal::FormatPercent(999999, 1000000), "99.9999");
  EXPECT_EQ(internal::FormatPercent(1, 1000000000), "1e-07");
  EXPECT_EQ(internal::FormatPercent(0, 0), "0");
}

TEST(FormatShortest, RoundTrips) {
  EXPECT_EQ(internal::FormatShortest(1e-5), "1e-05");
  EXPECT_EQ(internal::FormatShortest(0.001), "0.001");
  EXPECT_EQ(internal::FormatShortest(1.5e-7), "1.5e-07");
}

TEST(IntAbsDiff, ExactAcrossSignednessAndRange) {
  const auto bits = [](int64_t value) { return static_cast<uint64_t>(value); };
  const int64_t big = int64_t{1} << 62;
  const uint64_t umax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(internal::IntAbsDiff(bits(big + 1), true, bits(big), true), 1.0);
  EXPECT_EQ(internal::IntAbsDiff(bits(-3), true, bits(4), true), 7.0);
  EXPECT_EQ(internal::IntAbsDiff(umax, false, umax - 1, false), 1.0);
  EXPECT_EQ(internal::IntAbsDiff(bits(-1), true, umax, false), 0x1.0p64);
  EXPECT_EQ(internal::IntAbsDiff(bits(5), true, 3, false), 2.0);
  EXPECT_TRUE(internal::IntEqual(bits(5), true, 5, false));
  EXPECT_FALSE(internal::IntEqual(bits(-1), true, umax, false));
  EXPECT_TRUE(internal::IntEqual(bits(-1), true, bits(-1), true));
}

}  // namespace
}  // namespace convgate::compare
