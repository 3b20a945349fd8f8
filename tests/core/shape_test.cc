#include "convgate/core/shape.h"

#include <gtest/gtest.h>

namespace convgate {
namespace {

TEST(Shape, CountsElements) {
  EXPECT_EQ(Shape().NumElements(), 1);
  EXPECT_EQ(Shape::Of({2, 3, 4}).NumElements(), 24);
  EXPECT_EQ(Shape::Of({2, 0, 4}).NumElements(), 0);
}

TEST(Shape, RejectsNegativeAndOverflowingDims) {
  EXPECT_EQ(Shape::Make({1, -1}).status().code(), StatusCode::kInvalidArgument);
  Result<Shape> huge = Shape::Make({int64_t{1} << 31, int64_t{1} << 31});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("2^60"), std::string::npos);
  EXPECT_FALSE(Shape::Make({0, int64_t{1} << 40, int64_t{1} << 40}).ok());
}

TEST(Shape, UnravelsRowMajor) {
  Shape shape = Shape::Of({2, 3, 4});
  EXPECT_EQ(shape.Unravel(0), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(shape.Unravel(23), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(shape.Unravel(13), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(shape.ToString(), "[2, 3, 4]");
}

TEST(ParseShape, AcceptsXAndCommaSeparators) {
  EXPECT_EQ(ParseShape("1x3x224x224")->dims(), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(ParseShape("2,5")->dims(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(ParseShape("")->rank(), 0u);
  EXPECT_FALSE(ParseShape("1xx3").ok());
  EXPECT_FALSE(ParseShape("1x-3").ok());
  EXPECT_FALSE(ParseShape("abc").ok());
}

}  // namespace
}  // namespace convgate
