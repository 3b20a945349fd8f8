#include "convgate/core/backoff.h"

#include <gtest/gtest.h>

namespace convgate {
namespace {

TEST(BackoffTest, DoublesFromTheBaseUpToTheCeiling) {
  EXPECT_DOUBLE_EQ(ExponentialBackoff(0.5, 60.0, 0), 0.5);
  EXPECT_DOUBLE_EQ(ExponentialBackoff(0.5, 60.0, 1), 1.0);
  EXPECT_DOUBLE_EQ(ExponentialBackoff(0.5, 60.0, 3), 4.0);
  EXPECT_DOUBLE_EQ(ExponentialBackoff(0.5, 60.0, 10), 60.0);
  EXPECT_DOUBLE_EQ(ExponentialBackoff(1.0, 30.0, 1000), 30.0);  // no overflow
  EXPECT_DOUBLE_EQ(ExponentialBackoff(1.0, 30.0, -1), 1.0);     // a negative retry is the first
}

TEST(BackoffTest, JitterScalesTheWaitAndNothingIsNegative) {
  EXPECT_DOUBLE_EQ(ExponentialBackoff(1.0, 30.0, 2, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(ExponentialBackoff(1.0, 30.0, 2, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(ExponentialBackoff(1.0, 30.0, 2, 7.0), 4.0);  // jitter is at most 1
  EXPECT_DOUBLE_EQ(ExponentialBackoff(-1.0, 30.0, 2), 0.0);
}

}  // namespace
}  // namespace convgate
