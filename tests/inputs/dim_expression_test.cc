#include "inputs/dim_expression.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace convgate::inputs::internal {
namespace {

int64_t From(const std::map<std::string, int64_t>& values, const std::string& name) {
  auto it = values.find(name);
  return it == values.end() ? 1 : it->second;
}

TEST(DimExpression, PlainSymbolsAndOddTextAreNotExpressions) {
  EXPECT_FALSE(ExpressionParts("batch").has_value());
  EXPECT_FALSE(ExpressionParts("a + + b").has_value());
  EXPECT_FALSE(ExpressionParts("(a + b)").has_value());
  EXPECT_FALSE(ExpressionParts("a / 2").has_value());
  EXPECT_FALSE(ExpressionParts("a +").has_value());
  EXPECT_EQ(ExpressionParts("past_sequence_length + sequence_length"),
            (std::vector<std::string>{"past_sequence_length", "sequence_length"}));
}

TEST(DimExpression, EvaluatesProductsBeforeSums) {
  const std::map<std::string, int64_t> values = {{"a", 3}, {"b", 4}};
  const auto value_of = [&](const std::string& name) { return From(values, name); };
  EXPECT_EQ(EvaluateDimExpression("a + b", value_of), 7);
  EXPECT_EQ(EvaluateDimExpression("a*b+2", value_of), 14);
  EXPECT_EQ(EvaluateDimExpression("2 + a * b - 1", value_of), 13);
  EXPECT_EQ(EvaluateDimExpression("b - a - 1", value_of), 0);
  EXPECT_EQ(EvaluateDimExpression("unbound + 1", value_of), 2);
  EXPECT_FALSE(EvaluateDimExpression("a - b", value_of).has_value());  // negative
  EXPECT_FALSE(EvaluateDimExpression("batch", value_of).has_value());
  EXPECT_FALSE(EvaluateDimExpression("4000000000 * 4000000000 * 4000000000", value_of).has_value());
}

}  // namespace
}  // namespace convgate::inputs::internal
