// The comparison engine's performance machinery must never change a result: threads, SIMD, the
// bounded percentile selection. Also the metrics' edge cases and the error summary's consistency
// with the exact statistics.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "compare/accumulator.h"
#include "compare/frontier_builder.h"
#include "compare/test_rng.h"
#include "convgate/compare/tensor_compare.h"
#include "hwy/targets.h"

namespace {

// Live heap bytes while counting is on, and their peak: enough to show CompareTensors holds
// nothing per element. Counts every thread's allocations.
std::atomic<bool> counting{false};
std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};

void* CountedAlloc(size_t size, size_t alignment = 0) {
  size = size == 0 ? 1 : size;
  void* ptr = alignment == 0
                  ? std::malloc(size)
                  : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (ptr == nullptr) throw std::bad_alloc();
  if (counting) {
    const int64_t now = live_bytes += static_cast<int64_t>(malloc_usable_size(ptr));
    int64_t peak = peak_bytes;
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
  }
  return ptr;
}

void CountedFree(void* ptr) {
  if (ptr == nullptr) return;
  if (counting) live_bytes -= static_cast<int64_t>(malloc_usable_size(ptr));
  std::free(ptr);
}

}  // namespace

void* operator new(size_t size) { return CountedAlloc(size); }
void* operator new[](size_t size) { return CountedAlloc(size); }
// The nothrow forms too (Tensor::Allocate uses them): left to the runtime, their blocks would be
// released through the counting operator delete[] below, a mismatch ASan reports.
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* ptr) noexcept { CountedFree(ptr); }
void operator delete[](void* ptr) noexcept { CountedFree(ptr); }
void operator delete(void* ptr, size_t) noexcept { CountedFree(ptr); }
void operator delete[](void* ptr, size_t) noexcept { CountedFree(ptr); }
void* operator new(size_t size, std::align_val_t alignment) {
  return CountedAlloc(size, static_cast<size_t>(alignment));
}
void* operator new[](size_t size, std::align_val_t alignment) {
  return CountedAlloc(size, static_cast<size_t>(alignment));
}
void operator delete(void* ptr, std::align_val_t) noexcept { CountedFree(ptr); }
void operator delete[](void* ptr, std::align_val_t) noexcept { CountedFree(ptr); }
void operator delete(void* ptr, size_t, std::align_val_t) noexcept { CountedFree(ptr); }
void operator delete[](void* ptr, size_t, std::align_val_t) noexcept { CountedFree(ptr); }

namespace convgate::compare {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor Floats(const std::vector<float>& values) {
  return Tensor::FromVector<float>(DType::kFloat32,
                                   Shape::Of({static_cast<int64_t>(values.size())}), values);
}

// Source uniform in [-1, 1], target within 1e-4, a few far off, a few NaN/Inf on either side.
std::pair<Tensor, Tensor> NoisyPair(size_t count, uint64_t seed) {
  TestRng rng(seed);
  std::vector<float> source(count);
  std::vector<float> target(count);
  for (size_t idx = 0; idx < count; ++idx) {
    source[idx] = static_cast<float>(rng.Uniform(-1.0, 1.0));
    target[idx] = source[idx] + static_cast<float>(rng.Uniform(-1e-4, 1e-4));
    const double u = rng.Uniform();
    if (u < 1e-3) target[idx] += 0.05f;
    if (u < 2e-6) target[idx] = static_cast<float>(u < 1e-6 ? kNaN : kInf);
    if (u > 1.0 - 1e-6) source[idx] = static_cast<float>(kNaN);
  }
  return {Floats(source), Floats(target)};
}

// Bit-for-bit equality of everything CompareTensors computes.
void ExpectIdentical(const TensorComparison& a, const TensorComparison& b,
                     bool with_summary = true) {
  const auto same_summary = [](const ValueSummary& x, const ValueSummary& y) {
    return x.min == y.min && x.max == y.max && x.mean == y.mean && x.finite == y.finite &&
           x.nan == y.nan && x.pos_inf == y.pos_inf && x.neg_inf == y.neg_inf;
  };
  EXPECT_TRUE(same_summary(a.source_values, b.source_values));
  EXPECT_TRUE(same_summary(a.target_values, b.target_values));
  EXPECT_EQ(a.non_finite.introduced_nan, b.non_finite.introduced_nan);
  EXPECT_EQ(a.non_finite.first_introduced, b.non_finite.first_introduced);
  EXPECT_EQ(a.non_finite.inherited, b.non_finite.inherited);
  EXPECT_EQ(a.non_finite.first_inherited, b.non_finite.first_inherited);
  EXPECT_EQ(a.errors.compared, b.errors.compared);
  EXPECT_EQ(a.errors.max_abs_error, b.errors.max_abs_error);
  EXPECT_EQ(a.errors.mean_abs_error, b.errors.mean_abs_error);
  EXPECT_EQ(a.errors.max_rel_error, b.errors.max_rel_error);
  EXPECT_EQ(a.errors.mean_rel_error, b.errors.mean_rel_error);
  for (size_t idx = 0; idx < std::size(kPercentiles); ++idx) {
    EXPECT_EQ(a.errors.abs_error_percentiles[idx], b.errors.abs_error_percentiles[idx]) << idx;
  }
  EXPECT_EQ(a.errors.max_abs.flat, b.errors.max_abs.flat);
  EXPECT_EQ(a.metrics.rmse, b.metrics.rmse);
  EXPECT_EQ(a.metrics.nmse, b.metrics.nmse);
  EXPECT_EQ(a.metrics.cosine, b.metrics.cosine);
  EXPECT_EQ(a.metrics.snr_db, b.metrics.snr_db);
  EXPECT_EQ(a.metrics.psnr_db, b.metrics.psnr_db);
  EXPECT_EQ(a.metrics.peak, b.metrics.peak);
  if (with_summary) {
    EXPECT_TRUE(a.summary == b.summary);
    EXPECT_GT(a.summary.frontier.depth(), 0);
  }
  EXPECT_EQ(a.mismatches, b.mismatches);
  EXPECT_EQ(a.worst.flat, b.worst.flat);
  EXPECT_EQ(a.atol_to_pass, b.atol_to_pass);
  EXPECT_EQ(a.rtol_to_pass, b.rtol_to_pass);
  EXPECT_EQ(a.failures, b.failures);
}

CompareOptions Threads(int threads) {
  CompareOptions options;
  options.threads = threads;
  return options;
}

TEST(Engine, ThreadCountDoesNotChangeAnyBit) {
  const auto [source, target] = NoisyPair(3'000'000, 1);
  const TensorComparison one = CompareTensors(source, target, Tolerance(), Threads(1));
  const TensorComparison four = CompareTensors(source, target, Tolerance(), Threads(4));
  const TensorComparison two = CompareTensors(source, target, Tolerance(), Threads(2));
  ASSERT_GT(one.mismatches, 0);
  ASSERT_GT(one.non_finite.introduced_nan, 0);
  ExpectIdentical(one, four);
  ExpectIdentical(one, two);
}

TEST(Engine, WithoutTheErrorSummaryEverythingElseIsTheSame) {
  const auto [source, target] = NoisyPair(300'000, 3);
  CompareOptions options;
  options.error_summary = false;
  const TensorComparison with = CompareTensors(source, target, Tolerance());
  const TensorComparison without = CompareTensors(source, target, Tolerance(), options);
  ASSERT_GT(with.mismatches, 0);
  ExpectIdentical(with, without, /*with_summary=*/false);
  EXPECT_FALSE(without.summary.Covers(without.errors.compared));
  EXPECT_EQ(without.summary.frontier.depth(), 0);
}

// A tensor over a copy of `tensor`'s bytes that starts `shift` bytes past an aligned address: how
// an .npz member read in place (io/npz.h) arrives, wherever its zip header ends.
Tensor Misaligned(const Tensor& tensor, size_t shift) {
  auto storage = std::make_shared<std::vector<std::byte>>(tensor.byte_size() + 16);
  std::byte* start = storage->data() + shift;  // operator new aligns to 16
  std::memcpy(start, tensor.bytes().data(), tensor.byte_size());
  return Tensor::Adopt(tensor.dtype(), tensor.shape(), {start, tensor.byte_size()}, storage)
      .value();
}

TEST(Engine, MisalignedFloat32GivesTheSameBitsAsAligned) {
  const auto [source, target] = NoisyPair(300'000, 5);
  const TensorComparison aligned = CompareTensors(source, target, Tolerance(), Threads(2));
  ASSERT_GT(aligned.mismatches, 0);
  for (size_t shift : {1, 2, 3}) {
    const Tensor odd_source = Misaligned(source, shift);
    const Tensor odd_target = Misaligned(target, 4 - shift);
    ASSERT_FALSE(odd_source.IsAligned());
    ASSERT_FALSE(odd_target.IsAligned());
    ExpectIdentical(aligned, CompareTensors(odd_source, odd_target, Tolerance(), Threads(2)));
    ExpectIdentical(aligned, CompareTensors(odd_source, target, Tolerance(), Threads(1)));
  }
}

// Float64 pairs over the whole range, denormals to 1e300, with tiny tolerances: the SIMD
// filters' edge cases (products losing precision, zero sources, huge ratios).
std::pair<Tensor, Tensor> ExtremePair(size_t count, uint64_t seed) {
  TestRng rng(seed);
  std::vector<double> source(count);
  std::vector<double> target(count);
  for (size_t idx = 0; idx < count; ++idx) {
    const double magnitude = std::pow(10.0, rng.Uniform(-320.0, 300.0));
    source[idx] = rng.Uniform() < 0.05 ? 0.0 : rng.Uniform(-1.0, 1.0) * magnitude;
    target[idx] = source[idx] * (1.0 + rng.Uniform(-1e-3, 1e-3)) + rng.Uniform(0.0, 1e-310);
  }
  const Shape shape = Shape::Of({static_cast<int64_t>(count)});
  return {Tensor::FromVector<double>(DType::kFloat64, shape, source),
          Tensor::FromVector<double>(DType::kFloat64, shape, target)};
}

TEST(Engine, MisalignedFloat64GivesTheSameBitsAsAligned) {
  const auto [source32, target32] = NoisyPair(200'000, 7);
  const auto widen = [](const Tensor& tensor) {
    Tensor wide = Tensor::Allocate(DType::kFloat64, tensor.shape()).value();
    for (int64_t idx = 0; idx < tensor.num_elements(); ++idx) {
      wide.SetDouble(idx, tensor.GetDouble(idx) * (1.0 + 1e-9 * static_cast<double>(idx % 7)));
    }
    return wide;
  };
  const Tensor source = widen(source32);
  const Tensor target = widen(target32);
  const Tolerance tight;
  const TensorComparison aligned = CompareTensors(source, target, tight, Threads(2));
  ASSERT_GT(aligned.mismatches, 0);
  for (size_t shift : {1, 4}) {
    const Tensor odd_source = Misaligned(source, shift);
    ASSERT_FALSE(odd_source.IsAligned());
    ExpectIdentical(aligned,
                    CompareTensors(odd_source, Misaligned(target, shift), tight, Threads(2)));
  }
}

// The SIMD path against the scalar reference (AccumulateFloat on the whole tensor).
void ExpectSimdAgreesWithScalar(const Tensor& source, const Tensor& target,
                                const Tolerance& tolerance) {
  const TensorComparison simd = CompareTensors(source, target, tolerance);
  const auto count = static_cast<size_t>(source.num_elements());
  std::vector<double> s(count);
  std::vector<double> t(count);
  for (size_t idx = 0; idx < count; ++idx) {
    s[idx] = source.GetDouble(static_cast<int64_t>(idx));
    t[idx] = target.GetDouble(static_cast<int64_t>(idx));
  }
  internal::Accumulator acc;
  internal::Sums sums;
  internal::AccumulateFloat(s, t, 0, tolerance, acc, sums);
  EXPECT_EQ(simd.errors.compared, acc.compared);
  EXPECT_EQ(simd.errors.max_abs_error, acc.max_abs_error);
  EXPECT_EQ(simd.errors.max_abs.flat, acc.max_abs_flat);
  EXPECT_EQ(simd.errors.max_rel_error, acc.max_rel_error);
  EXPECT_EQ(simd.mismatches - simd.non_finite.introduced_nan - simd.non_finite.introduced_inf -
                simd.non_finite.inherited,
            acc.value_mismatches);
  EXPECT_EQ(simd.worst.flat, acc.non_finite.first_introduced >= 0 ? acc.non_finite.first_introduced
                                                                  : acc.worst_value.flat);
  EXPECT_EQ(simd.atol_to_pass, acc.atol_to_pass);
  EXPECT_EQ(simd.rtol_to_pass, acc.rtol_to_pass);
  EXPECT_EQ(simd.metrics.peak, acc.peak);
  EXPECT_EQ(simd.source_values.min, acc.source.min);
  EXPECT_EQ(simd.target_values.max, acc.target.max);
  // Every pair in one builder here, through the filter in blocks in CompareTensors' frontier
  // pass: the same skyband either way.
  internal::FrontierBuilder all_pairs;
  for (size_t idx = 0; idx < count; ++idx) {
    if (std::isfinite(s[idx]) && std::isfinite(t[idx])) {
      all_pairs.Add(std::abs(s[idx]), std::abs(t[idx] - s[idx]));
    }
  }
  EXPECT_TRUE(simd.summary ==
              SummarizeErrors(acc.histograms,
                              all_pairs.Finish(acc.compared, acc.compared - acc.zero_errors)));
  EXPECT_NEAR(simd.errors.mean_abs_error, sums.abs_error / static_cast<double>(acc.compared),
              1e-12 * simd.errors.mean_abs_error);
}

TEST(Engine, SimdAgreesWithScalarReference) {
  const auto [source, target] = NoisyPair(100'003, 2);
  ExpectSimdAgreesWithScalar(source, target, Tolerance());
  const auto [tiny_source, tiny_target] = ExtremePair(20'011, 6);
  ExpectSimdAgreesWithScalar(tiny_source, tiny_target, Tolerance{1e-300, 1e-6});
  ExpectSimdAgreesWithScalar(tiny_source, tiny_target, Tolerance{0.0, 0.0});
}

// Every SIMD target the library was built for (AVX-512, AVX2, SSE4, ... down to the emulated
// one) gives the same results; sums may differ in their last bits (different lane counts add in
// different orders).
TEST(Engine, EverySimdTargetAgrees) {
  const auto [source, target] = NoisyPair(50'003, 5);
  std::vector<TensorComparison> results;
  std::vector<std::string> names;
  for (const int64_t simd_target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(simd_target);
    results.push_back(CompareTensors(source, target, Tolerance()));
    names.push_back(hwy::TargetName(simd_target));
  }
  hwy::SetSupportedTargetsForTest(0);
  ASSERT_GE(results.size(), 2u);
  for (size_t idx = 1; idx < results.size(); ++idx) {
    SCOPED_TRACE(names[idx] + " vs " + names[0]);
    const TensorComparison& a = results[0];
    const TensorComparison& b = results[idx];
    EXPECT_EQ(a.errors.max_abs_error, b.errors.max_abs_error);
    EXPECT_EQ(a.errors.max_abs.flat, b.errors.max_abs.flat);
    EXPECT_EQ(a.errors.max_rel_error, b.errors.max_rel_error);
    for (size_t q = 0; q < std::size(kPercentiles); ++q) {
      EXPECT_EQ(a.errors.abs_error_percentiles[q], b.errors.abs_error_percentiles[q]);
    }
    EXPECT_NEAR(a.errors.mean_abs_error, b.errors.mean_abs_error, 1e-12 * a.errors.mean_abs_error);
    EXPECT_NEAR(a.metrics.snr_db, b.metrics.snr_db, 1e-9);
    EXPECT_TRUE(a.summary == b.summary);
    EXPECT_EQ(a.mismatches, b.mismatches);
    EXPECT_EQ(a.worst.flat, b.worst.flat);
    EXPECT_EQ(a.atol_to_pass, b.atol_to_pass);
    EXPECT_EQ(a.rtol_to_pass, b.rtol_to_pass);
    EXPECT_EQ(a.source_values.min, b.source_values.min);
    EXPECT_EQ(a.target_values.max, b.target_values.max);
  }
}

// CompareTensors keeps no per-element buffer: with 4M float32 pairs (32 MB of inputs; one double
// per element would be 32 MB more), the heap grows by the chunk buffers, histograms and the bounded
// selection scratch only.
TEST(Engine, MemoryDoesNotGrowWithElementCount) {
  const auto [source, target] = NoisyPair(4'000'000, 3);
  CompareOptions options = Threads(2);
  options.selection_scratch_values = int64_t{1} << 18;  // 2 MiB
  live_bytes = 0;
  peak_bytes = 0;
  counting = true;
  const TensorComparison result = CompareTensors(source, target, Tolerance(), options);
  counting = false;
  EXPECT_EQ(result.errors.compared, result.summary.abs_error.count());
  EXPECT_LT(peak_bytes.load(), 8 << 20) << "peak heap growth in bytes";
  std::printf("peak heap growth: %.2f MiB for %.0f MiB of inputs\n", peak_bytes.load() / 1048576.0,
              (source.byte_size() + target.byte_size()) / 1048576.0);
}

// The summary agrees with the exact statistics it summarizes.
TEST(Engine, SummaryBracketsTheExactStatistics) {
  const auto [source, target] = NoisyPair(200'000, 4);
  const Tolerance tolerance;
  const TensorComparison result = CompareTensors(source, target, tolerance);
  const ErrorSummary& summary = result.summary;
  EXPECT_EQ(summary.abs_error.count(), result.errors.compared);
  EXPECT_EQ(summary.rel_error.count(), result.errors.compared);
  EXPECT_EQ(summary.joint.count(), result.errors.compared);
  EXPECT_EQ(summary.abs_error.max(), result.errors.max_abs_error);
  EXPECT_EQ(summary.rel_error.max(), result.errors.max_rel_error);
  for (size_t idx = 0; idx < std::size(kPercentiles); ++idx) {
    const Bracket<double> bracket = summary.abs_error.Percentile(kPercentiles[idx]);
    EXPECT_LE(bracket.lo, result.errors.abs_error_percentiles[idx]);
    EXPECT_GE(bracket.hi, result.errors.abs_error_percentiles[idx]);
  }
  const int64_t finite_mismatches = result.mismatches - result.non_finite.introduced_nan -
                                    result.non_finite.introduced_inf - result.non_finite.inherited;
  const Bracket<int64_t> outside = summary.joint.CountOutside(tolerance.atol, tolerance.rtol);
  EXPECT_LE(outside.lo, finite_mismatches);
  EXPECT_GE(outside.hi, finite_mismatches);
}

TEST(Metrics, IdenticalSidesHaveInfiniteSnr) {
  const Tensor values = Floats({0.5f, -2.0f, 3.0f});
  const Metrics metrics = CompareTensors(values, values, Tolerance()).metrics;
  EXPECT_EQ(metrics.rmse, 0.0);
  EXPECT_EQ(metrics.nmse, 0.0);
  EXPECT_EQ(metrics.cosine, 1.0);
  EXPECT_EQ(metrics.snr_db, kInf);
  EXPECT_EQ(metrics.psnr_db, kInf);
  EXPECT_EQ(metrics.peak, 3.0);
}

TEST(Metrics, AllZeroSidesAreIdentical) {
  const Tensor zeros = Floats({0.0f, -0.0f, 0.0f});
  const Metrics metrics = CompareTensors(zeros, zeros, Tolerance()).metrics;
  EXPECT_EQ(metrics.cosine, 1.0);
  EXPECT_EQ(metrics.nmse, 0.0);
  EXPECT_EQ(metrics.snr_db, kInf);
  EXPECT_EQ(metrics.psnr_db, kInf);
}

TEST(Metrics, OneSideZero) {
  const Tensor zeros = Floats({0.0f, 0.0f});
  const Tensor values = Floats({3.0f, -4.0f});
  const Metrics source_zero = CompareTensors(zeros, values, Tolerance()).metrics;
  EXPECT_EQ(source_zero.nmse, kInf);
  EXPECT_EQ(source_zero.cosine, 0.0);
  EXPECT_EQ(source_zero.snr_db, -kInf);
  EXPECT_EQ(source_zero.psnr_db, -kInf);  // peak 0
  EXPECT_DOUBLE_EQ(source_zero.rmse, std::sqrt(12.5));
  const Metrics target_zero = CompareTensors(values, zeros, Tolerance()).metrics;
  EXPECT_EQ(target_zero.nmse, 1.0);
  EXPECT_EQ(target_zero.cosine, 0.0);
  EXPECT_EQ(target_zero.snr_db, 0.0);
  EXPECT_DOUBLE_EQ(target_zero.psnr_db, 10 * std::log10(16 / 12.5));
}

TEST(Metrics, OppositeSignsAndNoFinitePairs) {
  const Tensor values = Floats({1.0f, 2.0f});
  const Tensor negated = Floats({-1.0f, -2.0f});
  EXPECT_DOUBLE_EQ(CompareTensors(values, negated, Tolerance()).metrics.cosine, -1.0);
  const Tensor nans = Floats({std::nanf(""), std::nanf("")});
  const Metrics none = CompareTensors(nans, values, Tolerance()).metrics;
  EXPECT_EQ(none.rmse, 0.0);
  EXPECT_EQ(none.snr_db, 0.0);
  EXPECT_EQ(none.cosine, 0.0);
}

}  // namespace
}  // namespace convgate::compare
