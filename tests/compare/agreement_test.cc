#include "convgate/compare/agreement.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace convgate::compare {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor Scores(std::vector<int64_t> dims, std::vector<float> values) {
  return Tensor::FromVector(DType::kFloat32, Shape::Make(std::move(dims)).value(), values);
}

Tensor Labels(std::vector<int64_t> values) {
  const int64_t count = static_cast<int64_t>(values.size());
  return Tensor::FromVector(DType::kInt64, Shape::Of({count}), values);
}

AgreementStats Measure(const Tensor& source, const Tensor& target, AgreementOptions options = {},
                       PredictionKind kind = PredictionKind::kScores) {
  AgreementAccumulator accumulator(kind, std::move(options));
  const Status added = accumulator.Add(source, target);
  EXPECT_TRUE(added.ok()) << added.ToString();
  return accumulator.Stats();
}

TEST(Agreement, IdenticalScoresAgreeEverywhere) {
  const std::vector<float> values{0.1f, 0.7f, 0.2f, 0.5f, 0.3f, 0.2f};
  AgreementStats stats = Measure(Scores({2, 3}, values), Scores({2, 3}, values));
  EXPECT_EQ(stats.rows, 2);
  EXPECT_EQ(stats.classes, 3);
  EXPECT_EQ(stats.top1_agree, 2);
  EXPECT_EQ(stats.Top1(), 1.0);
  EXPECT_EQ(stats.TopK(5), 1.0);
  EXPECT_EQ(stats.flips, 0);
  EXPECT_EQ(stats.margin_rows, 2);
  EXPECT_TRUE(stats.IsDiagonal());
  EXPECT_EQ(stats.diagonal, (std::map<int64_t, int64_t>{{0, 1}, {1, 1}}));
}

// numpy.argmax: the first maximal element wins, on both sides.
TEST(Agreement, TiesGoToTheLowestIndex) {
  // Row 0: both tie 1 and 2; both pick 1. Row 1: the source picks 0 (tie with 2), the target 2.
  AgreementStats stats = Measure(Scores({2, 3}, {0.f, 3.f, 3.f, 5.f, 1.f, 5.f}),
                                 Scores({2, 3}, {0.f, 3.f, 3.f, 5.f, 1.f, 6.f}));
  EXPECT_EQ(stats.top1_agree, 1);
  ASSERT_EQ(stats.off_diagonal.size(), 1u);
  EXPECT_EQ(stats.off_diagonal[0].source, 0);
  EXPECT_EQ(stats.off_diagonal[0].target, 2);
  // A source tie has margin 0, which never exceeds the default flip margin of 0: neither row
  // counts toward flips, though row 1 disagrees.
  EXPECT_EQ(stats.margin_rows, 0);
  EXPECT_EQ(stats.flips, 0);
  EXPECT_EQ(stats.FlipRate(), 0.0);
}

TEST(Agreement, NaNRowsDisagreeAndStayOutOfTheConfusionMatrix) {
  AgreementStats stats = Measure(Scores({3, 2}, {1.f, 0.f, kNaN, 0.f, 1.f, 0.f}),
                                 Scores({3, 2}, {1.f, 0.f, kNaN, 0.f, kNaN, 0.f}));
  EXPECT_EQ(stats.rows, 3);
  EXPECT_EQ(stats.nan_rows, 2);
  EXPECT_EQ(stats.top1_agree, 1);
  EXPECT_EQ(stats.TopKAgree(5), 1);
  EXPECT_EQ(stats.flips, 2);
  EXPECT_EQ(stats.margin_rows, 3);
  EXPECT_EQ(stats.diagonal, (std::map<int64_t, int64_t>{{0, 1}}));
  EXPECT_TRUE(stats.off_diagonal.empty());
  EXPECT_FALSE(stats.IsDiagonal());  // NaN rows have no label
}

TEST(Agreement, FlipsCountOnlyRowsWhoseSourceMarginExceedsEpsilon) {
  // Source margins 0.05 (row 0) and 0.5 (row 1); the target flips both.
  const Tensor source = Scores({2, 2}, {0.525f, 0.475f, 0.75f, 0.25f});
  const Tensor target = Scores({2, 2}, {0.4f, 0.6f, 0.2f, 0.8f});
  AgreementStats loose = Measure(source, target, {.top_k = {}, .flip_margin = 0.1});
  EXPECT_EQ(loose.margin_rows, 1);
  EXPECT_EQ(loose.flips, 1);
  EXPECT_EQ(loose.FlipRate(), 1.0);
  EXPECT_EQ(loose.top1_agree, 0);  // top-1 ignores the margin
  AgreementStats strict = Measure(source, target);
  EXPECT_EQ(strict.margin_rows, 2);
  EXPECT_EQ(strict.flips, 2);
  AgreementStats none = Measure(source, target, {.top_k = {}, .flip_margin = 1.0});
  EXPECT_EQ(none.margin_rows, 0);
  EXPECT_EQ(none.FlipRate(), 0.0);
}

TEST(Agreement, TopKIsTheSourceTop1WithinTheTargetTopK) {
  // The source picks class 2; the target ranks it fourth (after 5, 0 and 1).
  const Tensor source = Scores({6}, {0.f, 0.f, 9.f, 0.f, 0.f, 0.f});
  const Tensor target = Scores({6}, {5.f, 4.f, 3.f, 1.f, 2.f, 6.f});
  AgreementStats stats = Measure(source, target, {.top_k = {3, 4, 5, 3, 1}});
  EXPECT_EQ(stats.rows, 1);  // rank 1 is one row
  EXPECT_EQ(stats.TopKAgree(1), 0);
  EXPECT_EQ(stats.TopKAgree(3), 0);
  EXPECT_EQ(stats.TopKAgree(4), 1);
  EXPECT_EQ(stats.TopKAgree(5), 1);
  EXPECT_EQ(stats.TopKAgree(2), -1);  // not counted
  EXPECT_EQ(stats.TopK(2), -1.0);
  ASSERT_EQ(stats.top_k_agree.size(), 3u);  // 3, 4, 5: sorted, deduplicated, 1 excluded
  EXPECT_EQ(stats.top_k_agree[0].first, 3);
}

TEST(Agreement, TopKTiesInTheTargetAreOrderedByIndex) {
  // Target ties classes 0, 1 and 2; the source's class 2 comes third among them.
  AgreementStats stats =
      Measure(Scores({3}, {0.f, 0.f, 1.f}), Scores({3}, {1.f, 1.f, 1.f}), {.top_k = {2, 3}});
  EXPECT_EQ(stats.TopKAgree(2), 0);
  EXPECT_EQ(stats.TopKAgree(3), 1);
}

TEST(Agreement, KAboveTheClassCountAlwaysAgrees) {
  AgreementStats stats = Measure(Scores({2, 3}, {1.f, 0.f, 0.f, 0.f, 1.f, 0.f}),
                                 Scores({2, 3}, {0.f, 0.f, 1.f, 1.f, 0.f, 0.f}));
  EXPECT_EQ(stats.top1_agree, 0);
  EXPECT_EQ(stats.TopK(5), 1.0);
}

TEST(Agreement, LeadingAxesAreRows) {
  std::vector<float> values(2 * 2 * 3, 0.f);
  for (int row = 0; row < 4; ++row) values[row * 3 + row % 3] = 1.f;
  AgreementStats stats = Measure(Scores({2, 2, 3}, values), Scores({2, 2, 3}, values));
  EXPECT_EQ(stats.rows, 4);
  EXPECT_EQ(stats.diagonal, (std::map<int64_t, int64_t>{{0, 2}, {1, 1}, {2, 1}}));
}

TEST(Agreement, InfinityIsAValidTopScore) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  AgreementStats stats =
      Measure(Scores({2, 2}, {kInf, 0.f, kInf, kInf}), Scores({2, 2}, {kInf, 0.f, kInf, kInf}));
  EXPECT_EQ(stats.top1_agree, 2);
  EXPECT_EQ(stats.margin_rows, 1);  // +Inf vs +Inf is a tie, margin 0, not NaN
}

TEST(Agreement, LabelConfusionMatrix) {
  AgreementStats stats = Measure(Labels({0, 1, 2, 2, 1, 1, 7}), Labels({0, 2, 2, 1, 1, 2, 7}), {},
                                 PredictionKind::kLabels);
  EXPECT_EQ(stats.rows, 7);
  EXPECT_EQ(stats.classes, 4);  // 0, 1, 2, 7
  EXPECT_EQ(stats.top1_agree, 4);
  EXPECT_EQ(stats.TopKAgree(5), 4);  // one prediction per element: top-k is top-1
  EXPECT_EQ(stats.flips, 3);
  EXPECT_EQ(stats.margin_rows, 7);  // labels have no margin: every element counts
  EXPECT_EQ(stats.diagonal, (std::map<int64_t, int64_t>{{0, 1}, {1, 1}, {2, 1}, {7, 1}}));
  ASSERT_EQ(stats.off_diagonal.size(), 2u);
  // Most frequent first: 1 -> 2 twice, then 2 -> 1 once.
  EXPECT_EQ(stats.off_diagonal[0].source, 1);
  EXPECT_EQ(stats.off_diagonal[0].target, 2);
  EXPECT_EQ(stats.off_diagonal[0].count, 2);
  EXPECT_EQ(stats.off_diagonal[1].source, 2);
  EXPECT_EQ(stats.OffDiagonalRows(), 3);
  EXPECT_EQ(stats.Labels(), (std::vector<int64_t>{0, 1, 2, 7}));
  EXPECT_FALSE(stats.IsDiagonal());
}

TEST(Agreement, LabelsOfAnyIntegerDtypeAndShape) {
  const Tensor source =
      Tensor::FromVector(DType::kInt32, Shape::Of({2, 2}), std::vector<int32_t>{-1, 3, 3, 0});
  const Tensor target =
      Tensor::FromVector(DType::kUInt8, Shape::Of({4}), std::vector<uint8_t>{255, 3, 3, 0});
  AgreementStats stats = Measure(source, target, {}, PredictionKind::kLabels);
  EXPECT_EQ(stats.rows, 4);
  EXPECT_EQ(stats.top1_agree, 3);
  ASSERT_EQ(stats.off_diagonal.size(), 1u);
  EXPECT_EQ(stats.off_diagonal[0].source, -1);
  EXPECT_EQ(stats.off_diagonal[0].target, 255);
}

TEST(Agreement, ConfusionFromScoresAndSamplesAccumulate) {
  AgreementAccumulator accumulator(PredictionKind::kScores, {});
  ASSERT_TRUE(accumulator.Add(Scores({1, 2}, {1.f, 0.f}), Scores({1, 2}, {0.f, 1.f})).ok());
  ASSERT_TRUE(
      accumulator.Add(Scores({2, 2}, {1.f, 0.f, 0.f, 1.f}), Scores({2, 2}, {0.f, 1.f, 0.f, 1.f}))
          .ok());
  AgreementStats stats = accumulator.Stats();
  EXPECT_EQ(stats.rows, 3);
  EXPECT_EQ(stats.flips, 2);
  ASSERT_EQ(stats.off_diagonal.size(), 1u);
  EXPECT_EQ(stats.off_diagonal[0].count, 2);
  EXPECT_EQ(stats.diagonal, (std::map<int64_t, int64_t>{{1, 1}}));
}

TEST(Agreement, Float64AndEmptyTensors) {
  const Tensor source =
      Tensor::FromVector(DType::kFloat64, Shape::Of({1, 2}), std::vector<double>{0.0, 1.0});
  EXPECT_EQ(Measure(source, source).top1_agree, 1);
  AgreementStats empty = Measure(Scores({0, 4}, {}), Scores({0, 4}, {}));
  EXPECT_EQ(empty.rows, 0);
  EXPECT_EQ(empty.Top1(), 1.0);
  EXPECT_TRUE(empty.IsDiagonal());
}

TEST(Agreement, PairsThatDoNotFitTheKindAreRejected) {
  AgreementAccumulator scores(PredictionKind::kScores, {});
  EXPECT_EQ(scores.Add(Labels({1}), Labels({1})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scores.Add(Scores({2, 2}, {0, 0, 0, 0}), Scores({4}, {0, 0, 0, 0})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(scores.Add(Scores({}, {1.f}), Scores({}, {1.f})).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(scores.Add(Scores({1, 2}, {0, 1}), Scores({1, 2}, {0, 1})).ok());
  const Status changed = scores.Add(Scores({1, 3}, {0, 1, 0}), Scores({1, 3}, {0, 1, 0}));
  EXPECT_EQ(changed.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(changed.message().find("3 entries, earlier samples had 2"), std::string::npos);
  EXPECT_EQ(scores.Stats().rows, 1);  // nothing added by the failures

  AgreementAccumulator labels(PredictionKind::kLabels, {});
  EXPECT_EQ(labels.Add(Labels({1, 2}), Labels({1})).code(), StatusCode::kInvalidArgument);
  const Status floats = labels.Add(Scores({2}, {0, 1}), Labels({1, 2}));
  EXPECT_NE(floats.message().find("source float32[2], target int64[2]"), std::string::npos);
}

}  // namespace
}  // namespace convgate::compare
