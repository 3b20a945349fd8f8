// ErrorHistogram and JointHistogram against brute force on random data: every bracket must contain
// the brute-force answer, and be exact where the header promises exactness.
#include "convgate/compare/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compare/test_rng.h"
#include "convgate/compare/tensor_compare.h"

namespace convgate::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDenormal = 4.9e-324;

// Error-like data of several shapes: log-uniform over 40 octaves with zeros and denormals,
// heavy ties on a coarse grid, one value repeated, and a few +Inf.
std::vector<double> MakeValues(int kind, size_t count, uint64_t seed) {
  TestRng rng(seed);
  std::vector<double> values;
  for (size_t idx = 0; idx < count; ++idx) {
    const double u = rng.Uniform();
    switch (kind) {
      case 0:
        values.push_back(u < 0.05   ? 0.0
                         : u < 0.07 ? kDenormal * (1 + rng.Next() % 1000)
                                    : std::exp2(rng.Uniform(-30.0, 10.0)));
        break;
      case 1:
        values.push_back(std::round(rng.Uniform(0.0, 4.0)) / 64.0);
        break;
      case 2:
        values.push_back(0.375);
        break;
      default:
        values.push_back(u < 0.01 ? kInf : rng.Uniform(0.0, 1e-3));
        break;
    }
  }
  return values;
}

ErrorHistogram HistogramOf(const std::vector<double>& values) {
  ErrorHistogram histogram;
  for (double value : values) histogram.Add(value);
  return histogram;
}

bool Contains(const Bracket<double>& bracket, double value) {
  if (std::isnan(value)) return std::isnan(bracket.lo) && std::isnan(bracket.hi);
  return bracket.lo <= value && value <= bracket.hi;
}

class ErrorHistogramBruteForce : public ::testing::TestWithParam<int> {};

TEST_P(ErrorHistogramBruteForce, RanksAndPercentilesAreBracketed) {
  std::vector<double> values = MakeValues(GetParam(), 5000, 11 + GetParam());
  const ErrorHistogram histogram = HistogramOf(values);
  std::sort(values.begin(), values.end());
  ASSERT_EQ(histogram.count(), 5000);
  EXPECT_EQ(histogram.min(), values.front());
  EXPECT_EQ(histogram.max(), values.back());
  for (int64_t rank = 0; rank < histogram.count(); ++rank) {
    const Bracket<double> bracket = histogram.ValueAtRank(rank);
    ASSERT_TRUE(Contains(bracket, values[static_cast<size_t>(rank)])) << rank;
    // Brackets are tight: within one bucket, 2^-6 of the lower edge for normal numbers.
    if (bracket.lo >= std::numeric_limits<double>::min() && bracket.hi != kInf) {
      ASSERT_LE(bracket.hi, bracket.lo * (1 + 1.0 / 64));
    }
  }
  EXPECT_TRUE(histogram.ValueAtRank(0).exact());
  EXPECT_TRUE(histogram.ValueAtRank(4999).exact());
  for (double q : {0.0, 0.1, 25.0, 50.0, 75.0, 90.0, 99.0, 99.5, 99.9, 100.0}) {
    std::vector<double> copy = values;
    const double exact = Percentile(copy, q);
    const Bracket<double> bracket = histogram.Percentile(q);
    EXPECT_TRUE(Contains(bracket, exact))
        << "q " << q << ": [" << bracket.lo << ", " << bracket.hi << "] misses " << exact;
    if (bracket.exact()) {
      EXPECT_EQ(bracket.lo, exact) << q;
    }
  }
}

TEST_P(ErrorHistogramBruteForce, CountAboveIsBracketedAndExactAtBucketEdges) {
  const std::vector<double> values = MakeValues(GetParam(), 3000, 21 + GetParam());
  const ErrorHistogram histogram = HistogramOf(values);
  const auto brute = [&](double threshold) {
    return std::count_if(values.begin(), values.end(), [&](double v) { return v > threshold; });
  };
  TestRng rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const double threshold = values[rng.Next() % values.size()] * rng.Uniform(0.9, 1.1);
    const Bracket<int64_t> count = histogram.CountAbove(threshold);
    EXPECT_LE(count.lo, brute(threshold)) << threshold;
    EXPECT_GE(count.hi, brute(threshold)) << threshold;
    // The largest value of a bucket splits no bucket: exact.
    const double edge = ErrorHistogram::BucketUpper(ErrorHistogram::BucketOf(threshold));
    EXPECT_TRUE(histogram.CountAbove(edge).exact()) << edge;
    EXPECT_EQ(histogram.CountAbove(edge).lo, brute(edge)) << edge;
  }
  EXPECT_EQ(histogram.CountAbove(-1.0).lo, 3000);
  EXPECT_TRUE(histogram.CountAbove(-1.0).exact());
  EXPECT_EQ(histogram.CountAbove(histogram.max()).hi, 0);
}

INSTANTIATE_TEST_SUITE_P(Kinds, ErrorHistogramBruteForce, ::testing::Values(0, 1, 2, 3));

TEST(ErrorHistogram, BucketsAreLogLinear) {
  EXPECT_EQ(ErrorHistogram::BucketOf(0.0), 0);
  EXPECT_EQ(ErrorHistogram::BucketOf(-0.0), 0);
  EXPECT_EQ(ErrorHistogram::BucketOf(kInf), ErrorHistogram::kInfBucket);
  EXPECT_EQ(ErrorHistogram::BucketOf(std::numeric_limits<double>::max()),
            ErrorHistogram::kInfBucket - 1);
  EXPECT_EQ(ErrorHistogram::BucketLower(ErrorHistogram::BucketOf(1.0)), 1.0);
  EXPECT_EQ(ErrorHistogram::BucketUpper(ErrorHistogram::BucketOf(1.0)),
            std::nextafter(1.0 + 1.0 / 64, 0.0));
  EXPECT_EQ(ErrorHistogram::BucketUpper(ErrorHistogram::kInfBucket), kInf);
}

TEST(ErrorHistogram, EmptyAndSingle) {
  ErrorHistogram histogram;
  EXPECT_EQ(histogram.count(), 0);
  EXPECT_EQ(histogram.min(), 0.0);
  EXPECT_EQ(histogram.max(), 0.0);
  EXPECT_TRUE(histogram.Sparse().empty());
  EXPECT_EQ(histogram.CountAbove(0.0).hi, 0);
  histogram.Add(0.3);
  EXPECT_EQ(histogram.Percentile(50).lo, 0.3);
  EXPECT_TRUE(histogram.Percentile(50).exact());
}

TEST(ErrorHistogram, MergeEqualsAddingEverything) {
  const std::vector<double> values = MakeValues(0, 4000, 3);
  ErrorHistogram low_half;
  ErrorHistogram high_half;
  low_half.AddAll(std::span<const double>(values).first(2000));
  high_half.AddAll(std::span<const double>(values).subspan(2000));
  ErrorHistogram merged;
  merged.Merge(high_half);
  merged.Merge(low_half);
  merged.Merge(ErrorHistogram());
  EXPECT_EQ(merged, HistogramOf(values));
  EXPECT_EQ(merged.count(), 4000);
}

TEST(ErrorHistogram, SparseRoundTrips) {
  const ErrorHistogram histogram = HistogramOf(MakeValues(3, 1000, 4));
  const Result<ErrorHistogram> copy =
      ErrorHistogram::FromSparse(histogram.Sparse(), histogram.min(), histogram.max());
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ(*copy, histogram);
  const Result<ErrorHistogram> empty = ErrorHistogram::FromSparse({}, 0.0, 0.0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->count(), 0);
}

TEST(ErrorHistogram, FromSparseRejectsInconsistentData) {
  const int32_t one = ErrorHistogram::BucketOf(1.0);
  const int32_t two = ErrorHistogram::BucketOf(2.0);
  using Buckets = std::vector<std::pair<int32_t, int64_t>>;
  const struct {
    std::string name;
    Buckets buckets;
    double min;
    double max;
  } kBad[] = {
      {"descending", {{two, 1}, {one, 1}}, 1.0, 2.0},
      {"duplicate", {{one, 1}, {one, 1}}, 1.0, 1.0},
      {"zero count", {{one, 0}, {two, 1}}, 1.0, 2.0},
      {"out of range", {{one, 1}, {ErrorHistogram::kInfBucket + 1, 1}}, 1.0, 2.0},
      {"min outside", {{one, 1}, {two, 1}}, 0.5, 2.0},
      {"max outside", {{one, 1}, {two, 1}}, 1.0, 4.0},
      {"min above max", {{one, 2}}, 1.01, 1.0},
      {"nan", {{one, 1}}, std::nan(""), 1.0},
      {"empty with min", {}, 1.0, 1.0},
      {"single with range", {{one, 1}}, 1.0, 1.01},
  };
  for (const auto& bad : kBad) {
    const Result<ErrorHistogram> result = ErrorHistogram::FromSparse(bad.buckets, bad.min, bad.max);
    ASSERT_FALSE(result.ok()) << bad.name;
    EXPECT_EQ(result.status().code(), StatusCode::kDataLoss) << bad.name;
  }
}

// Pairs (|s|, |t - s|) shaped like a converted model's outputs: sources over 20 octaves with some
// zeros, errors relative to the source plus an absolute floor, a few much larger.
std::vector<std::pair<double, double>> MakePairs(size_t count, uint64_t seed) {
  TestRng rng(seed);
  std::vector<std::pair<double, double>> pairs;
  for (size_t idx = 0; idx < count; ++idx) {
    const double source = rng.Uniform() < 0.05 ? 0.0 : std::exp2(rng.Uniform(-15.0, 5.0));
    const double relative = rng.Uniform() < 0.02 ? 1e-2 : 1e-4;
    pairs.emplace_back(source, source * rng.Uniform(0.0, relative) + rng.Uniform(0.0, 1e-6));
  }
  return pairs;
}

JointHistogram JointOf(const std::vector<std::pair<double, double>>& pairs) {
  JointHistogram histogram;
  for (const auto& [source, error] : pairs) histogram.Add(source, error);
  return histogram;
}

int64_t BruteOutside(const std::vector<std::pair<double, double>>& pairs, double atol,
                     double rtol) {
  int64_t outside = 0;
  for (const auto& [source, error] : pairs) outside += !(error <= atol + rtol * source);
  return outside;
}

TEST(JointHistogram, CountOutsideIsBracketed) {
  const std::vector<std::pair<double, double>> pairs = MakePairs(20000, 7);
  const JointHistogram histogram = JointOf(pairs);
  ASSERT_EQ(histogram.count(), 20000);
  for (double atol : {0.0, 1e-7, 1e-5, 1e-3}) {
    for (double rtol : {0.0, 1e-5, 1e-4, 1e-3, 1e-2}) {
      const Bracket<int64_t> count = histogram.CountOutside(atol, rtol);
      const int64_t brute = BruteOutside(pairs, atol, rtol);
      EXPECT_LE(count.lo, brute) << atol << " " << rtol;
      EXPECT_GE(count.hi, brute) << atol << " " << rtol;
    }
  }
}

// Every cell wholly inside or outside the boundary: the count is exact.
TEST(JointHistogram, ExactWhenNoCellStraddles) {
  std::vector<std::pair<double, double>> pairs;
  for (int idx = 0; idx < 100; ++idx) {
    pairs.emplace_back(1.0 + idx / 1000.0, idx % 10 == 0 ? 0x1.0p-5 : 0x1.0p-20);
    pairs.emplace_back(0.0, idx % 4 == 0 ? 0x1.0p-5 : 0.0);
  }
  const JointHistogram histogram = JointOf(pairs);
  const Bracket<int64_t> count = histogram.CountOutside(1e-3, 0.0);
  EXPECT_TRUE(count.exact());
  EXPECT_EQ(count.lo, BruteOutside(pairs, 1e-3, 0.0));
  EXPECT_EQ(count.lo, 10 + 25);
}

TEST(JointHistogram, AxisBucketsClampAtBothEnds) {
  EXPECT_EQ(JointHistogram::AxisBucketOf(0.0), 0);
  EXPECT_EQ(JointHistogram::AxisBucketOf(1e-300), 0);
  EXPECT_EQ(JointHistogram::AxisBucketOf(0x1.0p-126), 1);
  EXPECT_EQ(JointHistogram::AxisBucketOf(0x1.0p128), JointHistogram::kAxisBuckets - 1);
  EXPECT_EQ(JointHistogram::AxisBucketOf(kInf), JointHistogram::kAxisBuckets - 1);
  EXPECT_EQ(JointHistogram::AxisBucketOf(std::numeric_limits<float>::max()),
            JointHistogram::kAxisBuckets - 2);
  for (int32_t bucket = 0; bucket < JointHistogram::kAxisBuckets; ++bucket) {
    EXPECT_EQ(JointHistogram::AxisBucketOf(JointHistogram::AxisLower(bucket)), bucket);
    EXPECT_EQ(JointHistogram::AxisBucketOf(JointHistogram::AxisUpper(bucket)), bucket);
  }
}

TEST(JointHistogram, MergeAndSparseRoundTrip) {
  const std::vector<std::pair<double, double>> pairs = MakePairs(5000, 8);
  JointHistogram first = JointOf({pairs.begin(), pairs.begin() + 100});
  const JointHistogram second = JointOf({pairs.begin() + 100, pairs.end()});
  first.Merge(second);
  const JointHistogram all = JointOf(pairs);
  EXPECT_EQ(first, all);
  const Result<JointHistogram> copy = JointHistogram::FromSparse(all.Sparse());
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ(*copy, all);
  EXPECT_EQ(copy->CountOutside(1e-5, 1e-3).lo, all.CountOutside(1e-5, 1e-3).lo);
}

// The smallest bucket above 0 among `buckets`, 0 when there is none (IndexedPairs).
int32_t FirstAboveZero(const std::vector<int32_t>& buckets) {
  int32_t first = 0;
  for (int32_t bucket : buckets) {
    if (bucket > 0 && (first == 0 || bucket < first)) first = bucket;
  }
  return first;
}

// The engine's bulk path (packed precomputed indices) builds the same histograms as Add: with
// zeros mixed in (bucket 0's own slots), all in one bucket (counted at once), and from zeros on
// both axes only.
TEST(Histograms, BulkInsertionEqualsAdd) {
  for (const double scale : {1.0, 0.0, -1.0}) {
    std::vector<std::pair<double, double>> pairs = MakePairs(3000, 9);
    std::vector<uint64_t> packed;
    std::vector<int32_t> abs_buckets, rel_buckets, source_axis, error_axis;
    ErrorHistograms one_by_one;
    ErrorHistograms::IndexedPairs bulk{};
    bulk.abs_min = bulk.rel_min = kInf;
    for (size_t idx = 0; idx < pairs.size(); ++idx) {
      // scale -1: every third pair is (0, 0), the rest as generated.
      const bool zero = scale < 0 && idx % 3 == 0;
      const double source = zero ? 0.0 : pairs[idx].first;
      const double error = zero ? 0.0 : pairs[idx].second * std::abs(scale);
      const double rel = error / std::max(source, kRelErrorFloor);
      abs_buckets.push_back(ErrorHistogram::BucketOf(error));
      rel_buckets.push_back(ErrorHistogram::BucketOf(rel));
      source_axis.push_back(JointHistogram::AxisBucketOf(source));
      error_axis.push_back(JointHistogram::AxisBucketOf(error));
      packed.push_back(static_cast<uint64_t>(abs_buckets.back()) |
                       static_cast<uint64_t>(rel_buckets.back()) << ErrorHistograms::kRelShift |
                       JointHistogram::CellKey(source, error) << ErrorHistograms::kJointShift);
      bulk.abs_min = std::min(bulk.abs_min, error);
      bulk.abs_max = std::max(bulk.abs_max, error);
      bulk.rel_min = std::min(bulk.rel_min, rel);
      bulk.rel_max = std::max(bulk.rel_max, rel);
      bulk.source_max = std::max(bulk.source_max, source);
      one_by_one.abs_error.Add(error);
      one_by_one.rel_error.Add(rel);
      one_by_one.joint.Add(source, error);
    }
    bulk.packed = packed;
    bulk.abs_first_bucket = FirstAboveZero(abs_buckets);
    bulk.rel_first_bucket = FirstAboveZero(rel_buckets);
    bulk.source_first_axis_bucket = FirstAboveZero(source_axis);
    bulk.error_first_axis_bucket = FirstAboveZero(error_axis);
    ErrorHistograms summary;
    summary.AddIndexed(bulk);
    EXPECT_EQ(summary.abs_error, one_by_one.abs_error) << scale;
    EXPECT_EQ(summary.rel_error, one_by_one.rel_error) << scale;
    EXPECT_EQ(summary.joint, one_by_one.joint) << scale;
    EXPECT_EQ(summary.abs_error.count(), 3000);
  }
}

// Zeros and values far above them: bucket 0 has its own slot, so storage follows the non-zero
// range (a dense range from bucket 0 to 1e-5's would be half a MiB) and every query still sees
// bucket 0 first.
TEST(ErrorHistogram, ZerosKeepTheirOwnBucket) {
  ErrorHistogram histogram;
  for (double value : {0.0, 1e-5, 0.0, 2e-5, 4.9e-324, 1e-5}) histogram.Add(value);
  const std::vector<std::pair<int32_t, int64_t>> sparse = histogram.Sparse();
  ASSERT_EQ(sparse.size(), 3u);
  EXPECT_EQ(sparse[0], (std::pair<int32_t, int64_t>{0, 3}));
  EXPECT_EQ(histogram.BucketCount(0), 3);
  EXPECT_EQ(histogram.ValueAtRank(0).lo, 0.0);
  EXPECT_TRUE(Contains(histogram.ValueAtRank(4), 1e-5));
  EXPECT_EQ(histogram.CountAbove(0.0).lo, 3);
  EXPECT_EQ(histogram.CountAbove(0.0).hi, 6);  // bucket 0 holds a denormal: it straddles 0
  ErrorHistogram merged;
  merged.Merge(histogram);
  merged.Merge(histogram);
  EXPECT_EQ(merged.BucketCount(0), 6);
  const Result<ErrorHistogram> copy =
      ErrorHistogram::FromSparse(sparse, histogram.min(), histogram.max());
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ(*copy, histogram);
  JointHistogram joint;
  joint.Add(0.0, 0.0);
  joint.Add(1.0, 1e-5);
  joint.Add(0.0, 1e-5);
  joint.Add(1.0, 0.0);
  const std::vector<JointHistogram::Cell> cells = joint.Sparse();
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].source_bucket, 0);
  EXPECT_EQ(cells[0].error_bucket, 0);
  EXPECT_EQ(cells[1].source_bucket, 0);
  EXPECT_EQ(cells[2].error_bucket, 0);
  EXPECT_EQ(joint.CountOutside(0.0, 0.0).lo, 2);
}

TEST(JointHistogram, FromSparseRejectsBadCells) {
  using Cells = std::vector<JointHistogram::Cell>;
  const Cells kBad[] = {
      {{5, 5, 1}, {5, 4, 1}},
      {{5, 5, 1}, {5, 5, 1}},
      {{5, 5, 0}},
      {{-1, 5, 1}},
      {{5, JointHistogram::kAxisBuckets, 1}},
  };
  for (const Cells& cells : kBad) {
    const Result<JointHistogram> result = JointHistogram::FromSparse(cells);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kDataLoss);
  }
}

}  // namespace
}  // namespace convgate::compare
