// The error summary against brute force on the tensors it summarizes: the frontier is exactly the
// skyband it claims, its counts and tolerances-to-pass are never wrong, the quantile ladders and
// joint cells bracket the exact values, and the bracket is decided where the summary says so.
#include "convgate/compare/error_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compare/frontier_builder.h"
#include "compare/frontier_pass.h"
#include "convgate/compare/histogram.h"
#include "convgate/compare/tensor_compare.h"
#include "test_rng.h"

namespace convgate::compare {
namespace {

struct Pairs {
  std::vector<float> source;
  std::vector<float> target;
};

enum class Shape1 { kNoise, kRelu, kScaled, kFewOutliers };

// Float32 pairs of the kinds conversions produce: rounding noise, ReLU-like sources (a third
// exactly 0), a pure rescaling (errors grow with |s|: every pair is on the skyband), and a
// handful of outliers over noise.
Pairs MakePairs(Shape1 kind, size_t count, uint64_t seed) {
  TestRng rng(seed);
  Pairs pairs;
  for (size_t idx = 0; idx < count; ++idx) {
    float s = static_cast<float>(rng.Uniform(-4.0, 4.0));
    float t = s;
    switch (kind) {
      case Shape1::kNoise:
        t = s + static_cast<float>(rng.Uniform(-1e-3, 1e-3));
        break;
      case Shape1::kRelu:
        if (rng.Uniform() < 0.33) s = 0.0f;
        t = s + static_cast<float>(rng.Uniform(-1e-4, 1e-4)) * (s == 0.0f ? 0.1f : 1.0f);
        break;
      case Shape1::kScaled:
        t = s * 1.01f;
        break;
      case Shape1::kFewOutliers:
        t = s + static_cast<float>(rng.Uniform(-1e-6, 1e-6));
        if (idx % 997 == 0) t = s + 0.05f;
        break;
    }
    pairs.source.push_back(s);
    pairs.target.push_back(t);
  }
  return pairs;
}

Tensor Floats(const std::vector<float>& values) {
  return Tensor::FromVector<float>(DType::kFloat32,
                                   Shape::Of({static_cast<int64_t>(values.size())}), values);
}

// What the engine computes per pair.
struct Exact {
  std::vector<double> abs_source;
  std::vector<double> abs_error;
  std::vector<double> rel_error;

  explicit Exact(const Pairs& pairs) {
    for (size_t idx = 0; idx < pairs.source.size(); ++idx) {
      const double s = pairs.source[idx];
      const double t = pairs.target[idx];
      abs_source.push_back(std::abs(s));
      abs_error.push_back(std::abs(t - s));
      rel_error.push_back(abs_error.back() / std::max(std::abs(s), kRelErrorFloor));
    }
  }
  int64_t Outside(double atol, double rtol) const {
    int64_t count = 0;
    for (size_t idx = 0; idx < abs_error.size(); ++idx) {
      count += abs_error[idx] > atol + rtol * abs_source[idx] ? 1 : 0;
    }
    return count;
  }
};

TensorComparison CompareOf(const Pairs& pairs, int threads = 1) {
  CompareOptions options;
  options.threads = threads;
  return CompareTensors(Floats(pairs.source), Floats(pairs.target), Tolerance{}, options);
}

// Tolerances around the data: the errors' own order statistics and decades around them.
std::vector<std::pair<double, double>> Tolerances(const Exact& exact) {
  std::vector<double> sorted = exact.abs_error;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::pair<double, double>> out;
  for (double rtol : {0.0, 1e-5, 1e-4, 1e-3, 1e-2, 2e-2}) {
    for (double q : {0.5, 0.9, 0.99, 0.999, 1.0}) {
      const double value = sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
      for (double factor : {0.5, 0.9, 0.999, 1.001, 1.1, 2.0}) {
        out.emplace_back(value * factor, rtol);
      }
    }
  }
  return out;
}

class SummaryAgainstBruteForce : public ::testing::TestWithParam<Shape1> {};

TEST_P(SummaryAgainstBruteForce, CountsAreNeverWrongAndDecidedWhenTheFrontierSaysSo) {
  // 200k pairs: four engine blocks, so the frontier is joined across blocks.
  const Pairs pairs = MakePairs(GetParam(), 200'000, 7);
  const Exact exact(pairs);
  const TensorComparison cmp = CompareOf(pairs);
  const ErrorSummary& summary = cmp.summary;
  EXPECT_LE(summary.frontier.points().size(), static_cast<size_t>(kMaxFrontierPoints));
  int decided = 0;
  int total = 0;
  for (const auto& [atol, rtol] : Tolerances(exact)) {
    const int64_t truth = exact.Outside(atol, rtol);
    const Bracket<int64_t> count = summary.CountOutside(atol, rtol);
    EXPECT_LE(count.lo, truth) << atol << " " << rtol;
    EXPECT_GE(count.hi, truth) << atol << " " << rtol;
    const Frontier::Count kept = summary.frontier.CountOutside(atol, rtol);
    EXPECT_LE(kept.outside.lo, truth);
    if (kept.whole) {
      EXPECT_GE(kept.outside.hi, truth) << atol << " " << rtol;
    }
    // Verdicts with no mismatch allowed: decided unless a kept box straddles the boundary.
    ++total;
    decided += (count.hi == 0 || count.lo > 0) ? 1 : 0;
  }
  if (summary.frontier.depth() > 0) {
    // Factors 0.999 and 1.001 may fall inside a 0.1% box; the rest must decide.
    EXPECT_GE(decided, total * 2 / 3) << decided << " of " << total;
  }
}

TEST_P(SummaryAgainstBruteForce, TolerancesToPassAdmitEveryPairAndAreTight) {
  const Pairs pairs = MakePairs(GetParam(), 50'000, 11);
  const Exact exact(pairs);
  const Frontier& frontier = CompareOf(pairs).summary.frontier;
  if (frontier.depth() == 0) GTEST_SKIP() << "no frontier for this kind";
  for (double rtol : {0.0, 1e-4, 1e-3, 1e-2}) {
    const double atol = *frontier.AtolToPass(rtol);
    EXPECT_EQ(exact.Outside(atol, rtol), 0) << rtol;
    // Within the boxes' width (2^-10 of |t - s| and of rtol * |s|) of the exact figure.
    double needed = 0.0;
    double largest = 0.0;
    for (size_t idx = 0; idx < exact.abs_error.size(); ++idx) {
      needed = std::max(needed, exact.abs_error[idx] - rtol * exact.abs_source[idx]);
      largest = std::max(largest, exact.abs_error[idx] + rtol * exact.abs_source[idx]);
    }
    EXPECT_LE(atol, (needed + largest / 1000) * (1 + 1e-12)) << rtol;
  }
  for (double atol : {0.0, 1e-6, 1e-4}) {
    const double rtol = *frontier.RtolToPass(atol);
    if (std::isfinite(rtol)) {
      EXPECT_EQ(exact.Outside(atol, rtol), 0) << atol;
    }
  }
}

TEST_P(SummaryAgainstBruteForce, LaddersBracketNumpyPercentiles) {
  const Pairs pairs = MakePairs(GetParam(), 30'000, 3);
  Exact exact(pairs);
  const TensorComparison cmp = CompareOf(pairs);
  for (double q : {0.0, 1.0, 37.0, 50.0, 90.0, 95.0, 96.5, 99.0, 99.9, 99.97, 100.0}) {
    const double abs = Percentile(exact.abs_error, q);
    const double rel = Percentile(exact.rel_error, q);
    const Bracket<double> abs_bracket = cmp.summary.abs_error.Percentile(q);
    const Bracket<double> rel_bracket = cmp.summary.rel_error.Percentile(q);
    EXPECT_LE(abs_bracket.lo, abs) << q;
    EXPECT_GE(abs_bracket.hi, abs) << q;
    EXPECT_LE(rel_bracket.lo, rel) << q;
    EXPECT_GE(rel_bracket.hi, rel) << q;
  }
  // A rung is bracketed within its bucket (1/64 octave).
  const Bracket<double> p99 = cmp.summary.abs_error.Percentile(99.0);
  EXPECT_LE(p99.hi, p99.lo * (1.0 + 1.0 / 32) + 1e-300);
}

INSTANTIATE_TEST_SUITE_P(Kinds, SummaryAgainstBruteForce,
                         ::testing::Values(Shape1::kNoise, Shape1::kRelu, Shape1::kScaled,
                                           Shape1::kFewOutliers));

// The stored points are exactly the skyband of their depth (each inexact pair fewer than `depth`
// others dominate), checked against an O(n^2) count on a small tensor.
TEST(Frontier, IsExactlyTheSkybandOfItsDepth) {
  const Pairs pairs = MakePairs(Shape1::kNoise, 1500, 5);
  const Exact exact(pairs);
  const Frontier& frontier = CompareOf(pairs).summary.frontier;
  ASSERT_GT(frontier.depth(), 0);
  std::vector<Frontier::Pair> skyband;
  const size_t n = exact.abs_source.size();
  for (size_t p = 0; p < n; ++p) {
    if (exact.abs_error[p] == 0.0) continue;  // never outside: not kept
    int dominators = 0;
    for (size_t q = 0; q < n; ++q) {
      if (q == p) continue;
      const bool dominates_or_equal =
          exact.abs_source[q] <= exact.abs_source[p] && exact.abs_error[q] >= exact.abs_error[p];
      const bool same =
          exact.abs_source[q] == exact.abs_source[p] && exact.abs_error[q] == exact.abs_error[p];
      dominators += dominates_or_equal && (!same || q < p) ? 1 : 0;
    }
    if (dominators < frontier.depth()) skyband.push_back({exact.abs_source[p], exact.abs_error[p]});
  }
  const Frontier expected = Frontier::Of(frontier.depth(), false, 1500, skyband);
  EXPECT_EQ(frontier.points(), expected.points());
  // The next depth would not have fitted.
  EXPECT_LE(frontier.points().size(), static_cast<size_t>(kMaxFrontierPoints));
}

TEST(Frontier, KeepsEveryPairOfASmallTensor) {
  const Pairs pairs = MakePairs(Shape1::kNoise, 20, 9);
  const Exact exact(pairs);
  const ErrorSummary summary = CompareOf(pairs).summary;
  EXPECT_TRUE(summary.frontier.complete());
  EXPECT_EQ(summary.frontier.points().size(), 20u);
  const Frontier::Count count = summary.frontier.CountOutside(1e-4, 1e-3);
  EXPECT_TRUE(count.whole);
  EXPECT_EQ(count.outside.lo, exact.Outside(1e-4, 1e-3));
}

// Identical outputs need no pairs at all: every tolerance passes every pair.
TEST(Frontier, IdenticalOutputsKeepNothing) {
  const Pairs pairs = MakePairs(Shape1::kNoise, 5000, 21);
  const TensorComparison cmp =
      CompareTensors(Floats(pairs.source), Floats(pairs.source), Tolerance{});
  EXPECT_TRUE(cmp.summary.frontier.complete());
  EXPECT_TRUE(cmp.summary.frontier.points().empty());
  EXPECT_TRUE(cmp.summary.Covers(5000));
  EXPECT_EQ(cmp.summary.CountOutside(0.0, 0.0).hi, 0);
  EXPECT_EQ(cmp.summary.Percentile(99.0, true).hi, 0.0);
}

// The frontier pass is skipped when pass 1's joint histogram shows more undominated pairs than a
// frontier may store. The bound never exceeds the true count (O(n^2) below), and a skipped pass
// gives what collecting every pair gives: no frontier.
TEST(Frontier, UndominatedLowerBoundNeverExceedsTheTrueCount) {
  for (Shape1 kind : {Shape1::kNoise, Shape1::kRelu, Shape1::kScaled, Shape1::kFewOutliers}) {
    const Pairs pairs = MakePairs(kind, 3000, 17);
    const Exact exact(pairs);
    JointHistogram joint;
    internal::FrontierBuilder all_pairs;
    for (size_t p = 0; p < exact.abs_source.size(); ++p) {
      joint.Add(exact.abs_source[p], exact.abs_error[p]);
      all_pairs.Add(exact.abs_source[p], exact.abs_error[p]);
    }
    int64_t undominated = 0;
    for (size_t p = 0; p < exact.abs_source.size(); ++p) {
      if (exact.abs_error[p] == 0.0) continue;
      bool dominated = false;
      for (size_t q = 0; q < exact.abs_source.size() && !dominated; ++q) {
        const bool covers =
            exact.abs_source[q] <= exact.abs_source[p] && exact.abs_error[q] >= exact.abs_error[p];
        const bool same =
            exact.abs_source[q] == exact.abs_source[p] && exact.abs_error[q] == exact.abs_error[p];
        dominated = q != p && covers && (!same || q < p);
      }
      undominated += dominated ? 0 : 1;
    }
    const int64_t bound = internal::UndominatedLowerBound(joint);
    EXPECT_LE(bound, undominated) << static_cast<int>(kind);
    const int64_t inexact = static_cast<int64_t>(std::count_if(
        exact.abs_error.begin(), exact.abs_error.end(), [](double e) { return e > 0.0; }));
    const Frontier collected = all_pairs.Finish(3000, inexact);
    EXPECT_TRUE(CompareOf(pairs).summary.frontier == collected) << static_cast<int>(kind);
    if (bound > kMaxFrontierPoints) {
      EXPECT_EQ(collected.depth(), 0) << static_cast<int>(kind);
    }
  }
  // Errors that grow with |s| put every pair on the frontier: the bound sees it.
  const Pairs scaled = MakePairs(Shape1::kScaled, 3000, 17);
  JointHistogram joint;
  for (size_t p = 0; p < scaled.source.size(); ++p) {
    joint.Add(std::abs(double{scaled.source[p]}),
              std::abs(double{scaled.target[p]} - double{scaled.source[p]}));
  }
  EXPECT_GT(internal::UndominatedLowerBound(joint), kMaxFrontierPoints);
}

TEST(Frontier, ThreadCountDoesNotChangeIt) {
  const Pairs pairs = MakePairs(Shape1::kRelu, 400'000, 13);
  EXPECT_TRUE(CompareOf(pairs, 1).summary == CompareOf(pairs, 3).summary);
}

TEST(Frontier, FromStoredRejectsBadPoints) {
  EXPECT_FALSE(Frontier::FromStored(-1, false, 0, {}).ok());
  EXPECT_FALSE(Frontier::FromStored(1, false, 2, {{5, 1}, {4, 1}}).ok());
  EXPECT_FALSE(Frontier::FromStored(1, false, 1, {{-1, 1}}).ok());
  EXPECT_FALSE(Frontier::FromStored(2, false, 1, {{4, 9}, {5, 1}}).ok());
  EXPECT_TRUE(Frontier::FromStored(2, false, 2, {{4, 9}, {5, 1}}).ok());
}

TEST(Frontier, BucketsAreTenBitBoxes) {
  for (double value : {0.0, 1e-300, 0.1, 1.0, 3.5, 1e10}) {
    const int32_t bucket = Frontier::BucketOf(value);
    EXPECT_LE(Frontier::BucketLower(bucket), value);
    EXPECT_GE(Frontier::BucketUpper(bucket), value);
    if (value > 1e-300) {
      EXPECT_LE(Frontier::BucketUpper(bucket), Frontier::BucketLower(bucket) * (1 + 1.0 / 1024));
    }
  }
}

TEST(JointCells, CoarsenToTheCellBudgetAndStillBracket) {
  const Pairs pairs = MakePairs(Shape1::kRelu, 100'000, 17);
  const Exact exact(pairs);
  const JointCells& joint = CompareOf(pairs).summary.joint;
  EXPECT_EQ(joint.count(), 100'000);
  EXPECT_TRUE(joint.cells().size() <= static_cast<size_t>(kMaxJointCells) ||
              joint.width() == kMaxJointCellWidth);
  for (const auto& [atol, rtol] : Tolerances(exact)) {
    const Bracket<int64_t> count = joint.CountOutside(atol, rtol);
    const int64_t truth = exact.Outside(atol, rtol);
    EXPECT_LE(count.lo, truth);
    EXPECT_GE(count.hi, truth);
  }
  Result<JointCells> stored = JointCells::FromStored(joint.width(), joint.cells());
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(*stored == joint);
  EXPECT_FALSE(JointCells::FromStored(3, joint.cells()).ok());
}

TEST(QuantileLadder, FromStoredChecksItsShape) {
  const Pairs pairs = MakePairs(Shape1::kNoise, 1000, 19);
  const QuantileLadder ladder = CompareOf(pairs).summary.abs_error;
  Result<QuantileLadder> stored =
      QuantileLadder::FromStored(ladder.count(), ladder.min(), ladder.max(), ladder.buckets());
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(*stored == ladder);
  std::vector<int32_t> short_of_one = ladder.buckets();
  short_of_one.pop_back();
  EXPECT_FALSE(
      QuantileLadder::FromStored(ladder.count(), ladder.min(), ladder.max(), short_of_one).ok());
  std::vector<int32_t> descending = ladder.buckets();
  std::reverse(descending.begin(), descending.end());
  EXPECT_FALSE(
      QuantileLadder::FromStored(ladder.count(), ladder.min(), ladder.max(), descending).ok());
  EXPECT_TRUE(QuantileLadder::FromStored(0, 0.0, 0.0, {}).ok());
}

}  // namespace
}  // namespace convgate::compare
