#include "convgate/core/float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace convgate {
namespace {

TEST(Float16, RoundTripsEveryHalfBitPattern) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float value = HalfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(value)))) << bits;
      continue;
    }
    EXPECT_EQ(FloatToHalf(value), bits) << "bits 0x" << std::hex << bits;
  }
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);  // rounds down to the largest half
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // ties to even: overflows to +Inf, as numpy does
  EXPECT_EQ(FloatToHalf(1e9f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(FloatToHalf(5.9604644775390625e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(2.0e-8f), 0x0000);                 // below half of it: rounds to zero
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_FLOAT_EQ(HalfToFloat(0x3555), 0.333251953125f);
}

TEST(Float16, RoundsToNearestEven) {
  // 1 + 2^-11 lies exactly between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 lies between 1 + 2^-10 (odd) and 1 + 2^-9 (even): goes up.
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
}

TEST(BFloat16, KnownValuesAndRounding) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3F80);
  EXPECT_FLOAT_EQ(BFloat16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(FloatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie -> even
  EXPECT_EQ(FloatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie -> even (up)
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::nanf("")))));
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::infinity()), 0x7F80);
}

}  // namespace
}  // namespace convgate
