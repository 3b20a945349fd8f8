#include "convgate/inputs/input_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace convgate::inputs {
namespace {

using ::testing::HasSubstr;

TEST(ParseValueRange, AcceptsTheDocumentedSpellings) {
  struct Case {
    std::string text;
    double lo;
    double hi;
  };
  const Case cases[] = {
      {"[0,1]", 0.0, 1.0},         {"0,1", 0.0, 1.0},          {" [ -2 , 3.5 ] ", -2.0, 3.5},
      {"[1e-3,2E2]", 1e-3, 200.0}, {"-1.5e+1,+4", -15.0, 4.0}, {"[7,7]", 7.0, 7.0},
      {"[0,1)", 0.0, 1.0},         {"[0.5,2]", 0.5, 2.0},
  };
  for (const Case& c : cases) {
    Result<ValueRange> range = ParseValueRange(c.text);
    ASSERT_TRUE(range.ok()) << c.text << ": " << range.status().ToString();
    EXPECT_EQ(range->lo, c.lo) << c.text;
    EXPECT_EQ(range->hi, c.hi) << c.text;
  }
}

TEST(ParseValueRange, AHalfOpenRangeExcludesHiForIntegers) {
  EXPECT_TRUE(ParseValueRange("[0,5)")->hi_exclusive);
  EXPECT_FALSE(ParseValueRange("[0,5]")->hi_exclusive);
  EXPECT_FALSE(ParseValueRange("0,5")->hi_exclusive);
}

TEST(ParseValueRange, RejectsMalformedRanges) {
  for (const char* text :
       {"", "[]", "[0]", "0", "[0,1", "0,1]", "[0,1,2]", "[a,1]", "[0,1x]", "[nan,1]", "[0,inf]",
        "[-inf,0]", "[1e400,1e401]", "[0;1]", "[,1]", "[0,]", "[+-1,0]", "(0,1)", "0,1)"}) {
    Result<ValueRange> range = ParseValueRange(text);
    ASSERT_FALSE(range.ok()) << text;
    EXPECT_EQ(range.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(range.status().message(), HasSubstr("'" + std::string(text) + "'"));
    EXPECT_THAT(range.status().message(), HasSubstr("expected [lo,hi]"));
  }
}

TEST(ParseValueRange, RejectsLoAboveHi) {
  Result<ValueRange> range = ParseValueRange("[2,1]");
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(
      range.status().message(),
      "bad value range '[2,1]': lo is greater than hi; expected [lo,hi] or [lo,hi) with finite "
      "numbers lo <= hi, e.g. [0,1]");
}

TEST(ParseFill, AcceptsTheFourFills) {
  for (Fill fill : {Fill::kZeros, Fill::kOnes, Fill::kUniform, Fill::kNormal}) {
    Result<Fill> parsed = ParseFill(FillName(fill));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, fill);
  }
  Result<Fill> bad = ParseFill("gaussian");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "bad fill 'gaussian': expected zeros, ones, uniform or normal");
}

TEST(ParseDimBinding, ParsesSymbolEqualsValue) {
  Result<std::pair<std::string, int64_t>> binding = ParseDimBinding("batch=4");
  ASSERT_TRUE(binding.ok());
  EXPECT_EQ(binding->first, "batch");
  EXPECT_EQ(binding->second, 4);
  binding = ParseDimBinding(" seq_len = 0 ");
  ASSERT_TRUE(binding.ok());
  EXPECT_EQ(binding->first, "seq_len");
  EXPECT_EQ(binding->second, 0);
}

TEST(ParseDimBinding, RejectsMalformedBindings) {
  for (const char* text : {"batch", "batch=", "=4", "batch=-1", "batch=4.5", "batch=x",
                           "batch=99999999999999999999"}) {
    Result<std::pair<std::string, int64_t>> binding = ParseDimBinding(text);
    ASSERT_FALSE(binding.ok()) << text;
    EXPECT_EQ(binding.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(binding.status().message(),
              "bad dim binding '" + std::string(text) +
                  "': expected SYMBOL=VALUE with VALUE an integer >= 0, e.g. batch=4");
  }
}

TEST(AddOptions, GlobalAndPerInputValues) {
  InputOptions options;
  ASSERT_TRUE(AddValueRange("[-1,1]", options).ok());
  ASSERT_TRUE(AddValueRange("input:0:[0,5]", options).ok());
  ASSERT_TRUE(AddFill("normal", options).ok());
  ASSERT_TRUE(AddFill("mask:ones", options).ok());
  ASSERT_TRUE(AddShape("input:0:1x3", options).ok());
  ASSERT_TRUE(AddDimBinding("batch=2", options).ok());
  ASSERT_TRUE(options.range.has_value());
  EXPECT_EQ(options.range->lo, -1.0);
  EXPECT_EQ(options.range_per_input.at("input:0").hi, 5.0);
  EXPECT_EQ(options.fill, Fill::kNormal);
  EXPECT_EQ(options.fill_per_input.at("mask"), Fill::kOnes);
  EXPECT_EQ(options.shape_per_input.at("input:0"), Shape::Of({1, 3}));
  EXPECT_EQ(options.dim_per_symbol.at("batch"), 2);
}

TEST(AddOptions, LaterArgumentsReplaceEarlierOnes) {
  InputOptions options;
  ASSERT_TRUE(AddShape("x:1x3", options).ok());
  ASSERT_TRUE(AddShape("x:2x3", options).ok());
  ASSERT_TRUE(AddDimBinding("batch=2", options).ok());
  ASSERT_TRUE(AddDimBinding("batch=8", options).ok());
  EXPECT_EQ(options.shape_per_input.at("x"), Shape::Of({2, 3}));
  EXPECT_EQ(options.dim_per_symbol.at("batch"), 8);
}

TEST(AddOptions, ShapeNeedsAName) {
  InputOptions options;
  Status status = AddShape("1x3x224x224", options);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "bad --shape '1x3x224x224': expected NAME:DIMS naming one input, e.g. x:1x3x224x224");
  EXPECT_TRUE(options.shape_per_input.empty());
}

TEST(AddOptions, ScopedErrorsQuoteTheWholeArgument) {
  InputOptions options;
  Status range = AddValueRange("x:[1,a]", options);
  EXPECT_EQ(range.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(range.message(), HasSubstr("--val-range 'x:[1,a]': bad value range '[1,a]'"));
  Status fill = AddFill("x:random", options);
  EXPECT_THAT(fill.message(), HasSubstr("--fill 'x:random': bad fill 'random'"));
  Status shape = AddShape("x:1xq", options);
  EXPECT_THAT(shape.message(), HasSubstr("--shape 'x:1xq': bad shape '1xq'"));
  Status dim = AddDimBinding("batch:4", options);
  EXPECT_THAT(dim.message(), HasSubstr("bad dim binding 'batch:4'"));
  EXPECT_FALSE(options.range.has_value());
  EXPECT_TRUE(options.range_per_input.empty());
  EXPECT_TRUE(options.fill_per_input.empty());
}

}  // namespace
}  // namespace convgate::inputs
