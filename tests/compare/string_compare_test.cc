// Table tests of string comparison: equal, unequal, empty, mixed with numbers, and how messages
// quote strings that are long, non-ASCII or not text at all.
#include "compare/string_compare.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "convgate/compare/tensor_compare.h"

namespace convgate::compare {
namespace {

Tensor Strings(Shape shape, std::vector<std::string> values) {
  return std::move(Tensor::FromStrings(std::move(shape), std::move(values)).value());
}

Tensor Strings(std::vector<std::string> values) {
  const auto count = static_cast<int64_t>(values.size());
  return Strings(Shape::Of({count}), std::move(values));
}

struct StringCase {
  std::string name;
  Tensor source;
  Tensor target;
  std::vector<std::string> failures;
  int64_t mismatches = 0;
  int64_t worst_flat = -1;
  bool values_compared = true;
};

std::vector<StringCase> Cases() {
  std::vector<StringCase> cases;
  cases.push_back({"equal", Strings({"monday", "tuesday"}), Strings({"monday", "tuesday"}), {}});
  cases.push_back({"empty", Strings({}), Strings({}), {}});
  cases.push_back({"empty strings", Strings({"", ""}), Strings({"", ""}), {}});
  cases.push_back({"case differs",
                   Strings(Shape::Of({2, 3}), {"a", "b", "c", "monday", "e", "f"}),
                   Strings(Shape::Of({2, 3}), {"a", "b", "c", "MONDAY", "e", "F"}),
                   {"2 of 6 strings (33.3%) differ; first at [1, 0]: source \"monday\", target "
                    "\"MONDAY\""},
                   2,
                   3});
  cases.push_back({"no normalization",
                   Strings({"caf\xC3\xA9"}),
                   Strings({"cafe\xCC\x81"}),
                   {"1 of 1 strings (100%) differ; first at [0]: source \"caf\xC3\xA9\", target "
                    "\"cafe\xCC\x81\""},
                   1,
                   0});
  cases.push_back({"embedded NUL counts",
                   Strings({std::string("a\0b", 3)}),
                   Strings({"a"}),
                   {"1 of 1 strings (100%) differ; first at [0]: source \"a\\x00b\", target \"a\""},
                   1,
                   0});
  cases.push_back({"shape differs, count agrees",
                   Strings(Shape::Of({2}), {"x", "y"}),
                   Strings(Shape::Of({1, 2}), {"x", "z"}),
                   {"shape mismatch: source [2], target [1, 2]",
                    "1 of 2 strings (50%) differ; first at [1]: source \"y\", target \"z\""},
                   1,
                   1});
  cases.push_back(
      {"count differs",
       Strings({"x"}),
       Strings({"x", "y"}),
       {"shape mismatch: source [1], target [2]; values not compared (1 vs 2 elements)"},
       0,
       -1,
       false});
  cases.push_back({"string against float",
                   Strings({"1.5"}),
                   Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {1.5f}),
                   {"dtype mismatch: source string, target float32; values not compared (strings "
                    "are not numbers)"},
                   0,
                   -1,
                   false});
  cases.push_back({"int against string",
                   Tensor::FromVector<int64_t>(DType::kInt64, Shape::Of({1}), {1}),
                   Strings({"1"}),
                   {"dtype mismatch: source int64, target string; values not compared (strings "
                    "are not numbers)"},
                   0,
                   -1,
                   false});
  return cases;
}

TEST(StringCompare, Table) {
  for (const StringCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const TensorComparison result = CompareTensors(c.source, c.target, Tolerance{0.1, 0.1});
    EXPECT_EQ(result.failures, c.failures);
    EXPECT_EQ(result.passed, c.failures.empty());
    EXPECT_EQ(result.mismatches, c.mismatches);
    EXPECT_EQ(result.worst.flat, c.worst_flat);
    EXPECT_EQ(result.values_compared, c.values_compared);
    // Strings carry no numbers: every numeric statistic stays at zero.
    EXPECT_EQ(result.errors.compared, 0);
    EXPECT_EQ(result.source_values.finite, 0);
    EXPECT_EQ(result.target_values.finite, 0);
    EXPECT_EQ(result.atol_to_pass, 0.0);
    EXPECT_EQ(result.worst.abs_error, 0.0);
    EXPECT_TRUE(result.notes.empty());
  }
}

TEST(StringCompare, WorstElementCarriesBothTexts) {
  const TensorComparison result =
      CompareTensors(Strings({"same", "left", "x"}), Strings({"same", "right", "y"}), Tolerance());
  EXPECT_TRUE(result.exact);
  EXPECT_EQ(result.mismatches, 2);
  EXPECT_DOUBLE_EQ(result.mismatch_fraction, 2.0 / 3.0);
  EXPECT_EQ(result.worst.index, (std::vector<int64_t>{1}));
  EXPECT_EQ(result.worst.source_text, "left");
  EXPECT_EQ(result.worst.target_text, "right");
}

TEST(StringCompare, SummaryOfStringsIsZero) {
  const ValueSummary summary = SummarizeValues(Strings({"nan", "inf"}));
  EXPECT_EQ(summary.finite, 0);
  EXPECT_EQ(summary.nan, 0);
  EXPECT_EQ(summary.pos_inf, 0);
  EXPECT_EQ(summary.min, 0.0);
}

TEST(StringCompare, QuotesReadably) {
  using internal::QuoteString;
  EXPECT_EQ(QuoteString(""), "\"\"");
  EXPECT_EQ(QuoteString("K\xC3\xB6ln \xE2\x82\xAC"), "\"K\xC3\xB6ln \xE2\x82\xAC\"");
  EXPECT_EQ(QuoteString("say \"hi\"\\\n\t"), "\"say \\\"hi\\\"\\\\\\n\\t\"");
  EXPECT_EQ(QuoteString("\x01\x7F\xFF\xC3"), "\"\\x01\\x7f\\xff\\xc3\"");
  EXPECT_EQ(QuoteString("\xC2\x85"), "\"\\xc2\\x85\"");  // U+0085, a C1 control
  const std::string long_text(200, 'a');
  EXPECT_EQ(QuoteString(long_text),
            "\"" + std::string(internal::kMaxQuotedChars, 'a') + "\"... (200 bytes)");
  // Cut by characters, never inside a UTF-8 sequence.
  std::string accents;
  for (int idx = 0; idx < 70; ++idx) accents += "\xC3\xA9";
  std::string expected = "\"";
  for (size_t idx = 0; idx < internal::kMaxQuotedChars; ++idx) expected += "\xC3\xA9";
  EXPECT_EQ(QuoteString(accents), expected + "\"... (140 bytes)");
}

}  // namespace
}  // namespace convgate::compare
