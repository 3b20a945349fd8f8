// The number formatters every module shares (core/numbers.h). Their output reaches report files and
// messages that tests elsewhere pin byte for byte, so they are pinned here against what they
// replaced: printf's %.<digits>g and std::to_chars.
#include "convgate/core/numbers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace convgate {
namespace {

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

TEST(FormatSignificant, IsPrintfG) {
  EXPECT_EQ(FormatSignificant(0.001), "0.001");
  EXPECT_EQ(FormatSignificant(1e-5), "1e-05");
  EXPECT_EQ(FormatSignificant(0.5012345678), "0.501235");  // 6 digits by default, as %g
  EXPECT_EQ(FormatSignificant(1234567.0), "1.23457e+06");
  EXPECT_EQ(FormatSignificant(2.0), "2");
  EXPECT_EQ(FormatSignificant(-0.0), "-0");
  EXPECT_EQ(FormatSignificant(0.1234, 3), "0.123");
  EXPECT_EQ(FormatSignificant(99.96, 3), "100");
  EXPECT_EQ(FormatSignificant(1e-12, 10), "1e-12");
  EXPECT_EQ(FormatSignificant(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatSignificant(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatSignificant(std::nan("")), "nan");
  for (double value : {0.1, 1.0 / 3.0, 6.02214076e23, -2.5e-300, 600.0, 0.0001}) {
    EXPECT_EQ(FormatSignificant(value), Printf("%g", value));
    EXPECT_EQ(FormatSignificant(value, 3), Printf("%.3g", value));
    EXPECT_EQ(FormatSignificant(value, 10), Printf("%.10g", value));
    EXPECT_EQ(FormatSignificant(value, 17), Printf("%.17g", value));
  }
}

TEST(FormatShortest, ReadsBackAsTheSameDouble) {
  EXPECT_EQ(FormatShortest(0.1), "0.1");
  EXPECT_EQ(FormatShortest(1e-5), "1e-05");
  EXPECT_EQ(FormatShortest(1.5e-7), "1.5e-07");
  EXPECT_EQ(FormatShortest(3.0), "3");
  EXPECT_EQ(FormatShortest(-0.0), "-0");
  EXPECT_EQ(FormatShortest(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatShortest(std::nan("")), "nan");
  for (double value :
       {1.0 / 3.0, 0.1 + 0.2, 6.02214076e23, std::numeric_limits<double>::min(),
        std::numeric_limits<double>::max(), -std::numeric_limits<double>::denorm_min()}) {
    const std::string text = FormatShortest(value);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), value) << text;
    // No longer than the fewest %g digits that read back.
    std::string fewest;
    for (int digits = 1; digits <= 17 && fewest.empty(); ++digits) {
      const std::string candidate = FormatSignificant(value, digits);
      if (std::strtod(candidate.c_str(), nullptr) == value) fewest = candidate;
    }
    EXPECT_LE(text.size(), fewest.size()) << text << " vs " << fewest;
  }
}

}  // namespace
}  // namespace convgate
