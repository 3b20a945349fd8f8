// The "tolerance that would pass" figures behind the CLI's hints, and the single-tensor summary.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "convgate/compare/tensor_compare.h"

namespace convgate::compare {
namespace {

Tensor Floats(const std::vector<float>& values) {
  return Tensor::FromVector<float>(DType::kFloat32,
                                   Shape::Of({static_cast<int64_t>(values.size())}), values);
}

TEST(ToleranceToPass, IsTheSmallestToleranceThatPasses) {
  Tensor source = Floats({1.0f, -2.0f, 0.5f, 4.0f});
  Tensor target = Floats({1.01f, -2.0f, 0.52f, 4.1f});
  const Tolerance tolerance{1e-5, 1e-3};
  TensorComparison failing = CompareTensors(source, target, tolerance);
  ASSERT_FALSE(failing.passed);
  // |t - s| - rtol * |s| is largest at element 3: 0.1 - 0.004.
  EXPECT_NEAR(failing.atol_to_pass, (4.1f - 4.0f) - 1e-3 * 4.0, 1e-9);
  // (|t - s| - atol) / |s| is largest at element 2: (0.02 - 1e-5) / 0.5.
  EXPECT_NEAR(failing.rtol_to_pass, ((0.52f - 0.5f) - 1e-5) / 0.5, 1e-9);
  // Both suggestions, nudged up by one part in a million, pass; slightly less does not.
  EXPECT_TRUE(
      CompareTensors(source, target, {failing.atol_to_pass * (1 + 1e-6), tolerance.rtol}).passed);
  EXPECT_FALSE(
      CompareTensors(source, target, {failing.atol_to_pass * 0.99, tolerance.rtol}).passed);
  EXPECT_TRUE(
      CompareTensors(source, target, {tolerance.atol, failing.rtol_to_pass * (1 + 1e-6)}).passed);
  EXPECT_FALSE(
      CompareTensors(source, target, {tolerance.atol, failing.rtol_to_pass * 0.99}).passed);
}

TEST(ToleranceToPass, NoRelativeToleranceAbsorbsAnErrorAtZero) {
  TensorComparison cmp = CompareTensors(Floats({0.0f, 1.0f}), Floats({0.5f, 1.0f}), {1e-5, 1e-3});
  EXPECT_TRUE(std::isinf(cmp.rtol_to_pass));
  EXPECT_NEAR(cmp.atol_to_pass, 0.5, 1e-12);
}

TEST(ToleranceToPass, IsZeroWhenEqual) {
  TensorComparison cmp = CompareTensors(Floats({3.0f, 1.0f}), Floats({3.0f, 1.0f}), {1e-5, 1e-3});
  EXPECT_EQ(cmp.atol_to_pass, 0.0);
  EXPECT_EQ(cmp.rtol_to_pass, 0.0);
}

TEST(SummarizeValues, CountsNonFiniteAndSummarizesFinite) {
  const float inf = std::numeric_limits<float>::infinity();
  ValueSummary summary = SummarizeValues(Floats({1.0f, std::nanf(""), -inf, 3.0f, inf, inf}));
  EXPECT_EQ(summary.finite, 2);
  EXPECT_EQ(summary.nan, 1);
  EXPECT_EQ(summary.pos_inf, 2);
  EXPECT_EQ(summary.neg_inf, 1);
  EXPECT_EQ(summary.min, 1.0);
  EXPECT_EQ(summary.max, 3.0);
  EXPECT_EQ(summary.mean, 2.0);
  ValueSummary empty = SummarizeValues(Floats({}));
  EXPECT_EQ(empty.finite, 0);
  EXPECT_EQ(empty.min, 0.0);
}

}  // namespace
}  // namespace convgate::compare
