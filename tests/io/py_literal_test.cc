#include "io/py_literal.h"

#include <gtest/gtest.h>

namespace convgate::io::internal {
namespace {

TEST(PyLiteral, ParsesTheValuesNumpyHeadersUse) {
  Result<PyLiteral> dict = ParsePyLiteral(
      "{'a': 'x', \"b\": True, 'c': False, 'd': None, 'e': -12, 'f': (1, 2), 'g': (3,), "
      "'h': (), 'i': [('n', '<i4')], 'j': {}}");
  ASSERT_TRUE(dict.ok()) << dict.status().ToString();
  ASSERT_EQ(dict->kind, PyLiteral::Kind::kDict);
  EXPECT_EQ(dict->Find("a")->text, "x");
  EXPECT_TRUE(dict->Find("b")->boolean);
  EXPECT_FALSE(dict->Find("c")->boolean);
  EXPECT_EQ(dict->Find("c")->kind, PyLiteral::Kind::kBool);
  EXPECT_EQ(dict->Find("d")->kind, PyLiteral::Kind::kNone);
  EXPECT_EQ(dict->Find("e")->integer, -12);
  EXPECT_EQ(dict->Find("f")->items.size(), 2u);
  EXPECT_EQ(dict->Find("g")->kind, PyLiteral::Kind::kTuple);
  EXPECT_EQ(dict->Find("g")->items.size(), 1u);
  EXPECT_EQ(dict->Find("h")->items.size(), 0u);
  EXPECT_EQ(dict->Find("i")->kind, PyLiteral::Kind::kList);
  EXPECT_EQ(dict->Find("j")->kind, PyLiteral::Kind::kDict);
  EXPECT_EQ(dict->Find("missing"), nullptr);
}

TEST(PyLiteral, IntegersAtTheEdgesOfInt64) {
  EXPECT_EQ(ParsePyLiteral("9223372036854775807")->integer, INT64_MAX);
  EXPECT_EQ(ParsePyLiteral("-9223372036854775808")->integer, INT64_MIN);
  EXPECT_FALSE(ParsePyLiteral("9223372036854775808").ok());
  EXPECT_FALSE(ParsePyLiteral("-9223372036854775809").ok());
  EXPECT_EQ(ParsePyLiteral("(7)")->kind, PyLiteral::Kind::kInt);  // parentheses, not a tuple
  EXPECT_EQ(ParsePyLiteral("(7, )")->kind, PyLiteral::Kind::kTuple);
}

TEST(PyLiteral, RejectsWhatIsNotALiteral) {
  for (std::string_view text : {"", "{", "{'a' 1}", "{1: 2}", "(1 2)", "'abc", "-", "Truth", "1.5",
                                "{'a': 1,, }", "[1] x"}) {
    Result<PyLiteral> literal = ParsePyLiteral(text);
    ASSERT_FALSE(literal.ok()) << text;
    EXPECT_EQ(literal.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(literal.status().message().find("offset"), std::string::npos);
  }
  EXPECT_FALSE(ParsePyLiteral(std::string(1000, '(')).ok());  // depth limit, no stack overflow
  std::string many_keys = "{";
  for (int key = 0; key < 100; ++key) many_keys += "'k" + std::to_string(key) + "': 1, ";
  Result<PyLiteral> too_many = ParsePyLiteral(many_keys + "}");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("too many keys"), std::string::npos);
}

}  // namespace
}  // namespace convgate::io::internal
