// Percentile and the small internal helpers of the compare module.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "compare/accumulator.h"
#include "compare/messages.h"
#include "compare/test_rng.h"
#include "convgate/compare/tensor_compare.h"

namespace convgate::compare {
namespace {

// Expected values from numpy.percentile (numpy 1.24, method='linear').
TEST(Percentile, MatchesNumpyLinear) {
  std::vector<double> values = {4, 1, 3, 2};
  EXPECT_EQ(Percentile(values, 0), 1.0);
  EXPECT_EQ(Percentile(values, 50), 2.5);
  EXPECT_EQ(Percentile(values, 75), 3.25);
  EXPECT_EQ(Percentile(values, 100), 4.0);
  std::vector<double> eleven = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  EXPECT_EQ(Percentile(eleven, 99.5), 9.95);
  EXPECT_EQ(Percentile(eleven, 90), 9.0);
}

TEST(Percentile, SingleElementAndTies) {
  std::vector<double> one = {0.25};
  EXPECT_EQ(Percentile(one, 50), 0.25);
  EXPECT_EQ(Percentile(one, 99.5), 0.25);
  std::vector<double> ties = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  EXPECT_EQ(Percentile(ties, 50), 1.0);
  EXPECT_DOUBLE_EQ(Percentile(ties, 99), 1.91);
}

// Several percentiles in any order equal the one-at-a-time results.
TEST(Percentile, ManyAtOnceEqualsOneAtATime) {
  std::vector<double> values;
  for (int idx = 0; idx < 1000; ++idx) values.push_back((idx * 7919) % 1009 / 8.0);
  const double q[] = {99.5, 50, 0, 75, 99, 90, 50, 100};
  double many[std::size(q)];
  std::vector<double> scratch = values;
  Percentiles(scratch, q, many);
  for (size_t idx = 0; idx < std::size(q); ++idx) {
    std::vector<double> copy = values;
    EXPECT_EQ(many[idx], Percentile(copy, q[idx])) << q[idx];
  }
}

// Exact abs-error percentiles of CompareTensors against sorting, on data that is hard for a
// histogram-guided selection, whatever the scratch bound (1 value forces narrowing passes down to
// the last bit) and the thread count.
struct TrickyCase {
  const char* name;
  DType dtype;
  std::vector<double> source;
  std::vector<double> target;
};

std::vector<TrickyCase> TrickyCases() {
  constexpr size_t kCount = 150'000;  // three blocks, so two workers both select
  std::vector<TrickyCase> cases = {
      {"ties", DType::kFloat64, {}, {}},         {"all_equal", DType::kFloat64, {}, {}},
      {"all_zero", DType::kFloat32, {}, {}},     {"huge_range", DType::kFloat64, {}, {}},
      {"denormals", DType::kFloat64, {}, {}},    {"int_ties", DType::kInt32, {}, {}},
      {"with_nan_inf", DType::kFloat64, {}, {}},
  };
  TestRng rng(42);
  for (size_t idx = 0; idx < kCount; ++idx) {
    const double s = std::round(rng.Uniform(-100.0, 100.0));
    const double u = rng.Uniform();
    cases[0].source.push_back(s);
    cases[0].target.push_back(s + std::round(rng.Uniform(0.0, 3.0)) / 64);
    cases[1].source.push_back(s);
    cases[1].target.push_back(s + 0.375);
    cases[2].source.push_back(s);
    cases[2].target.push_back(s);
    cases[3].source.push_back(0.0);
    cases[3].target.push_back(u < 0.2 ? 0.0 : std::pow(10.0, rng.Uniform(-300.0, 300.0)));
    cases[4].source.push_back(0.0);
    cases[4].target.push_back(u < 0.3 ? 0.0 : 4.9e-324 * static_cast<double>(rng.Next() % 50));
    cases[5].source.push_back(s);
    cases[5].target.push_back(s + static_cast<double>(rng.Next() % 3));
    cases[6].source.push_back(u < 0.01 ? std::nan("") : s);
    cases[6].target.push_back(u > 0.99 ? std::numeric_limits<double>::infinity() : s + u);
  }
  return cases;
}

std::vector<double> SortedReference(const TrickyCase& c) {
  std::vector<double> errors;
  for (size_t idx = 0; idx < c.source.size(); ++idx) {
    if (std::isfinite(c.source[idx]) && std::isfinite(c.target[idx])) {
      errors.push_back(std::abs(c.target[idx] - c.source[idx]));
    }
  }
  std::sort(errors.begin(), errors.end());
  std::vector<double> expected(std::size(kPercentiles));
  Percentiles(errors, kPercentiles, expected);
  return expected;
}

Tensor MakeTensor(DType dtype, const std::vector<double>& values) {
  Tensor tensor =
      std::move(Tensor::Allocate(dtype, Shape::Of({static_cast<int64_t>(values.size())})).value());
  for (size_t idx = 0; idx < values.size(); ++idx) {
    tensor.SetDouble(static_cast<int64_t>(idx), values[idx]);
  }
  return tensor;
}

TEST(ErrorPercentiles, ExactOnTrickyDataWhateverTheScratchAndThreads) {
  for (const TrickyCase& c : TrickyCases()) {
    const std::vector<double> expected = SortedReference(c);
    const Tensor source = MakeTensor(c.dtype, c.source);
    const Tensor target = MakeTensor(c.dtype, c.target);
    for (const int64_t scratch : {int64_t{1} << 23, int64_t{1000}, int64_t{1}}) {
      for (const int threads : {1, 2}) {
        CompareOptions options;
        options.threads = threads;
        options.min_parallel_elements = 0;
        options.selection_scratch_values = scratch;
        const ErrorStats errors = CompareTensors(source, target, Tolerance(), options).errors;
        for (size_t idx = 0; idx < expected.size(); ++idx) {
          EXPECT_EQ(errors.abs_error_percentiles[idx], expected[idx])
              << c.name << " p" << kPercentiles[idx] << " scratch " << scratch << " threads "
              << threads;
        }
      }
    }
  }
}

TEST(FormatPercent, ThreeDigitsNeverRoundedToWhole) {
  EXPECT_EQ(internal::FormatPercent(12, 1000), "1.2");
  EXPECT_EQ(internal::FormatPercent(3, 10), "30");
  EXPECT_EQ(internal::FormatPercent(1, 3), "33.3");
  EXPECT_EQ(internal::FormatPercent(10, 10), "100");
  EXPECT_EQ(internal::FormatPercent(999999, 1000000), "99.9999");
  EXPECT_EQ(internal::FormatPercent(1, 1000000000), "1e-07");
  EXPECT_EQ(internal::FormatPercent(0, 0), "0");
}

TEST(FormatShortest, RoundTrips) {
  EXPECT_EQ(internal::FormatShortest(1e-5), "1e-05");
  EXPECT_EQ(internal::FormatShortest(0.001), "0.001");
  EXPECT_EQ(internal::FormatShortest(1.5e-7), "1.5e-07");
}

TEST(IntAbsDiff, ExactAcrossSignednessAndRange) {
  const auto bits = [](int64_t value) { return static_cast<uint64_t>(value); };
  const int64_t big = int64_t{1} << 62;
  const uint64_t umax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(internal::IntAbsDiff(bits(big + 1), true, bits(big), true), 1.0);
  EXPECT_EQ(internal::IntAbsDiff(bits(-3), true, bits(4), true), 7.0);
  EXPECT_EQ(internal::IntAbsDiff(umax, false, umax - 1, false), 1.0);
  EXPECT_EQ(internal::IntAbsDiff(bits(-1), true, umax, false), 0x1.0p64);
  EXPECT_EQ(internal::IntAbsDiff(bits(5), true, 3, false), 2.0);
  EXPECT_TRUE(internal::IntEqual(bits(5), true, 5, false));
  EXPECT_FALSE(internal::IntEqual(bits(-1), true, umax, false));
  EXPECT_TRUE(internal::IntEqual(bits(-1), true, bits(-1), true));
}

}  // namespace
}  // namespace convgate::compare
