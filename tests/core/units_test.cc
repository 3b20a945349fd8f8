// The one size and duration grammar every flag and environment variable uses.
#include "convgate/core/units.h"

#include <gtest/gtest.h>

namespace convgate {
namespace {

TEST(ParseByteSizeTest, AcceptsBinaryDecimalAndPlainUnits) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096);
  EXPECT_EQ(*ParseByteSize("4096B"), 4096);
  EXPECT_EQ(*ParseByteSize("2GiB"), int64_t{2} << 30);
  EXPECT_EQ(*ParseByteSize("2G"), int64_t{2} << 30);
  EXPECT_EQ(*ParseByteSize("512mib"), int64_t{512} << 20);
  EXPECT_EQ(*ParseByteSize("64MB"), 64'000'000);
  EXPECT_EQ(*ParseByteSize("1.5G"), int64_t{3} << 29);
  EXPECT_EQ(*ParseByteSize("10k"), 10240);
  EXPECT_EQ(*ParseByteSize("3T"), int64_t{3} << 40);
}

TEST(ParseByteSizeTest, RejectsMalformedSizesNamingThem) {
  EXPECT_EQ(*ParseByteSize("0"), 0);
  for (const char* text : {"", "GiB", "2 GiB", "2XB", "-5", "-1", "1.2.3MB", "0.1", "1Q",
                           "99999999999T", "+5", "1e9", "lots"}) {
    Result<int64_t> parsed = ParseByteSize(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.status().message().find("'" + std::string(text) + "'"), std::string::npos)
        << parsed.status().message();
    EXPECT_NE(parsed.status().message().find("2GiB"), std::string::npos)
        << "the message shows the grammar: " << parsed.status().message();
  }
}

TEST(ParseDurationTest, AcceptsSecondsAndUnits) {
  EXPECT_EQ(*ParseDuration("30"), 30.0);
  EXPECT_EQ(*ParseDuration("1.5s"), 1.5);
  EXPECT_EQ(*ParseDuration("500ms"), 0.5);
  EXPECT_EQ(*ParseDuration("10m"), 600.0);
  EXPECT_EQ(*ParseDuration("2h"), 7200.0);
  EXPECT_EQ(*ParseDuration("1d"), 86400.0);
  EXPECT_EQ(*ParseDuration("0"), 0.0);
}

TEST(ParseDurationTest, RejectsNegativeAndMalformed) {
  for (const char* text : {"", "soon", "-1", "1w", "1 h", "nan", "inf"}) {
    Result<double> parsed = ParseDuration(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.status().message().find("'" + std::string(text) + "'"), std::string::npos);
  }
}

TEST(FormatDurationTest, WholeUnitsWhereExact) {
  EXPECT_EQ(FormatDuration(600), "10 min");
  EXPECT_EQ(FormatDuration(86400), "1 d");
  EXPECT_EQ(FormatDuration(7200), "2 h");
  EXPECT_EQ(FormatDuration(0.5), "0.5 s");
  EXPECT_EQ(FormatDuration(90), "90 s");
}

}  // namespace
}  // namespace convgate
