// Highway's dynamic dispatch compiles this file once per target (foreach_target.h re-includes it)
// and HWY_DYNAMIC_DISPATCH picks the best one the CPU supports on first use.
//
// Exactness: every per-element value (|t - s|, the relative error, the tolerance bound, the
// tolerance-to-pass terms) is computed with the same operations in the same order as the scalar
// AccumulateFloat, and the module is built with -ffp-contract=off, so only the order of the sums
// differs. Lane-wise running minima and maxima reduce to the same values the scalar loop finds.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compare/simd_kernel.cc"
// Before everything else: foreach_target.h re-includes this file once per SIMD target.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "compare/simd_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "convgate/compare/histogram.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

#ifndef CONVGATE_COMPARE_SIMD_KERNEL_ONCE
#define CONVGATE_COMPARE_SIMD_KERNEL_ONCE
namespace convgate::compare::internal {

// What one chunk found, reduced from the lanes; committed to the Accumulator only when every
// element was finite.
struct ChunkResult {
  double source_min, source_max, target_min, target_max;
  Sums sums;
  double min_abs, max_abs, min_rel, max_rel, max_magnitude;
  // The smallest histogram bucket above 0 present (0 when none), per histogram axis.
  int32_t abs_first_bucket, rel_first_bucket, source_first_axis_bucket, error_first_axis_bucket;
  double atol_to_pass, rtol_to_pass;
  int64_t zeros = 0;
  int64_t mismatches = 0;
  WorstCandidate worst;
  bool finite = false;
};

// The joint histogram's axis clamp, done on the value before taking its bits: everything below
// 2^-126 becomes the largest double below it (axis bucket 0), everything from 2^128 up becomes
// 2^128 (the top bucket), so the bucket is one shift and one subtraction.
inline constexpr double kAxisClampLow = 0x1.fffffffffffffp-127;
inline constexpr double kAxisClampHigh = 0x1.0p128;
inline constexpr uint64_t kAxisTopBitsOffset = ((1023 - 126) << kJointSubBits) - 1;

// The tolerance-to-pass filter's safety factor: rtol_to_pass only changes where
// (|e| - atol) / |s| exceeds the lane's running maximum r, which implies |e| - atol > r * |s| in
// real arithmetic; shrinking the rounded product by 2^-40 makes the test conservative, so the
// division runs only for vectors that may raise the maximum (after the first few, almost none).
inline constexpr double kFilterShrink = 1.0 - 0x1.0p-40;
// Products below this may have lost their relative precision (denormals): there the filter only
// asks for |e| - atol > 0, which any ratio above r >= 0 needs anyway.
inline constexpr double kFilterTiny = 0x1.0p-1000;

// Elements ahead to prefetch (2 KiB of float32 per stream): the hardware prefetchers alone do not
// keep enough reads in flight for a loop this busy (see select_kernel.cc for the measurement).
inline constexpr size_t kPrefetchDistance = 512;

}  // namespace convgate::compare::internal
#endif  // CONVGATE_COMPARE_SIMD_KERNEL_ONCE

HWY_BEFORE_NAMESPACE();
namespace convgate::compare::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<double>;
using DU = hn::RebindToUnsigned<D>;
using V = hn::Vec<D>;

// Lane-wise running statistics of one chunk.
struct Lanes {
  V source_min, source_max, target_min, target_max;
  V sum_source, sum_target, sum_abs, sum_rel;
  V sum_squared_error, sum_squared_source, sum_squared_target, sum_dot;
  V min_abs, max_abs, min_rel, max_rel;
  V atol_to_pass, rtol_to_pass;
  // Per histogram axis, the smallest bucket minus 1 as unsigned: bucket 0 wraps to the maximum
  // and drops out, so this finds the smallest bucket above 0 (bucket 0 has its own slot).
  hn::Vec<DU> abs_first_bucket, rel_first_bucket, source_first_axis_bucket, error_first_axis_bucket;

  explicit Lanes(D d) {
    const V inf = hn::Set(d, std::numeric_limits<double>::infinity());
    const V zero = hn::Zero(d);
    source_min = target_min = min_abs = min_rel = inf;
    source_max = target_max = hn::Neg(inf);
    sum_source = sum_target = sum_abs = sum_rel = zero;
    sum_squared_error = sum_squared_source = sum_squared_target = sum_dot = zero;
    max_rel = atol_to_pass = rtol_to_pass = zero;
    max_abs = hn::Set(d, -1.0);
    const hn::Vec<DU> none = hn::Set(DU(), ~uint64_t{0});
    abs_first_bucket = rel_first_bucket = source_first_axis_bucket = error_first_axis_bucket = none;
  }
};

// One element outside the tolerance, scored as the scalar path scores it.
inline void ScoreElement(double abs_error, double bound, int64_t flat, ChunkResult& out) {
  if (abs_error <= bound) return;
  ++out.mismatches;
  const double score = bound > 0.0 ? abs_error / bound : std::numeric_limits<double>::infinity();
  const WorstCandidate candidate{flat, score, abs_error};
  if (candidate.Beats(out.worst)) out.worst = candidate;
}

// Scores the elements of the vectors that had a lane outside the tolerance (rare), lowest index
// first, recomputing |t - s| and the bound with the same operations as the vector code.
template <typename T>
void ScoreFailures(const T* source, const T* target, std::span<const uint32_t> failed_offsets,
                   size_t lanes_per_vector, const Tolerance& tolerance, int64_t first_flat,
                   ChunkResult& out) {
  for (uint32_t offset : failed_offsets) {
    for (size_t idx = offset; idx < offset + lanes_per_vector; ++idx) {
      const double s = source[idx];
      const double t = target[idx];
      ScoreElement(std::abs(t - s), tolerance.atol + tolerance.rtol * std::abs(s),
                   first_flat + static_cast<int64_t>(idx), out);
    }
  }
}

// rtol_to_pass: max over lanes of (|e| - atol) / |s| (+Inf where s = 0 and |e| > atol), with
// the division only where the filter says the maximum may rise (see kFilterShrink).
HWY_INLINE V UpdateRtolToPass(D d, V abs, V magnitude, V atol, V rtol_to_pass) {
  const V over = hn::Sub(abs, atol);
  const V bound = hn::Mul(hn::Mul(rtol_to_pass, magnitude), hn::Set(d, kFilterShrink));
  const V threshold = hn::IfThenElseZero(hn::Ge(bound, hn::Set(d, kFilterTiny)), bound);
  if (hn::AllFalse(d, hn::Gt(over, threshold))) return rtol_to_pass;
  const V ratio = hn::Div(over, magnitude);  // +Inf where s = 0 and over > 0
  const auto valid = hn::Or(hn::Gt(magnitude, hn::Zero(d)), hn::Gt(over, hn::Zero(d)));
  return hn::IfThenElse(hn::And(valid, hn::Gt(ratio, rtol_to_pass)), ratio, rtol_to_pass);
}

// Histogram indices of one vector, packed (see ChunkScratch).
HWY_INLINE void StoreHistogramIndices(V abs, V rel, V magnitude, ChunkScratch& scratch,
                                      size_t offset, Lanes& lanes) {
  const DU du;
  const D d;
  const auto abs_bucket = hn::ShiftRight<52 - kHistogramSubBits>(hn::BitCast(du, abs));
  const auto rel_bucket = hn::ShiftRight<52 - kHistogramSubBits>(hn::BitCast(du, rel));
  const V low = hn::Set(d, kAxisClampLow);
  const V high = hn::Set(d, kAxisClampHigh);
  const auto axis = [&](V value) {
    const V clamped = hn::Min(hn::Max(value, low), high);
    return hn::Sub(hn::ShiftRight<52 - kJointSubBits>(hn::BitCast(du, clamped)),
                   hn::Set(du, kAxisTopBitsOffset));
  };
  const auto source_axis = axis(magnitude);
  const auto error_axis = axis(abs);
  const auto one = hn::Set(du, 1);
  lanes.abs_first_bucket = hn::Min(lanes.abs_first_bucket, hn::Sub(abs_bucket, one));
  lanes.rel_first_bucket = hn::Min(lanes.rel_first_bucket, hn::Sub(rel_bucket, one));
  lanes.source_first_axis_bucket =
      hn::Min(lanes.source_first_axis_bucket, hn::Sub(source_axis, one));
  lanes.error_first_axis_bucket = hn::Min(lanes.error_first_axis_bucket, hn::Sub(error_axis, one));
  const auto joint_key =
      hn::Or(hn::ShiftLeft<JointHistogram::kCellKeyShift>(source_axis), error_axis);
  const auto packed =
      hn::Or(hn::Or(abs_bucket, hn::ShiftLeft<ErrorHistograms::kRelShift>(rel_bucket)),
             hn::ShiftLeft<ErrorHistograms::kJointShift>(joint_key));
  hn::StoreU(packed, du, scratch.packed_indices + offset);
}

// One vector of pairs into the lane statistics. Returns false when some lane is outside the
// tolerance: the caller scores those lanes after the loop, keeping calls (which would force the
// accumulators out of registers) out of it.
HWY_INLINE bool AccumulateVector(D d, V s, V t, const Tolerance& tolerance, size_t offset,
                                 Lanes& lanes, ChunkScratch& scratch, int64_t& zeros) {
  lanes.source_min = hn::Min(lanes.source_min, s);
  lanes.source_max = hn::Max(lanes.source_max, s);
  lanes.target_min = hn::Min(lanes.target_min, t);
  lanes.target_max = hn::Max(lanes.target_max, t);
  lanes.sum_source = hn::Add(lanes.sum_source, s);
  lanes.sum_target = hn::Add(lanes.sum_target, t);
  const V error = hn::Sub(t, s);
  const V abs = hn::Abs(error);
  const V magnitude = hn::Abs(s);
  const V rel = hn::Div(abs, hn::Max(magnitude, hn::Set(d, kRelErrorFloor)));
  lanes.sum_abs = hn::Add(lanes.sum_abs, abs);
  lanes.sum_rel = hn::Add(lanes.sum_rel, rel);
  // Fused multiply-adds where the CPU has them: these sums need no bit-exact agreement with the
  // scalar path (their order differs anyway), and they are a fifth of the arithmetic.
  lanes.sum_squared_error = hn::MulAdd(error, error, lanes.sum_squared_error);
  lanes.sum_squared_source = hn::MulAdd(s, s, lanes.sum_squared_source);
  lanes.sum_squared_target = hn::MulAdd(t, t, lanes.sum_squared_target);
  lanes.sum_dot = hn::MulAdd(s, t, lanes.sum_dot);
  // Only the value: where it lies is found after the loop, and only for a chunk whose maximum
  // beats every earlier one (a handful of chunks per tensor).
  lanes.max_abs = hn::Max(lanes.max_abs, abs);
  lanes.min_abs = hn::Min(lanes.min_abs, abs);
  lanes.min_rel = hn::Min(lanes.min_rel, rel);
  lanes.max_rel = hn::Max(lanes.max_rel, rel);
  zeros += static_cast<int64_t>(hn::CountTrue(d, hn::Eq(abs, hn::Zero(d))));
  // atol + rtol * |s| as numpy.isclose rounds it (two roundings, no FMA).
  const V rtol_term = hn::Mul(hn::Set(d, tolerance.rtol), magnitude);
  const V allowed = hn::Add(hn::Set(d, tolerance.atol), rtol_term);
  lanes.atol_to_pass = hn::Max(lanes.atol_to_pass, hn::Sub(abs, rtol_term));
  lanes.rtol_to_pass =
      UpdateRtolToPass(d, abs, magnitude, hn::Set(d, tolerance.atol), lanes.rtol_to_pass);
  StoreHistogramIndices(abs, rel, magnitude, scratch, offset, lanes);
  return hn::AllTrue(d, hn::Le(abs, allowed));
}

HWY_INLINE double MinOf(D d, V v) { return hn::GetLane(hn::MinOfLanes(d, v)); }
HWY_INLINE double MaxOf(D d, V v) { return hn::GetLane(hn::MaxOfLanes(d, v)); }
HWY_INLINE double SumOf(D d, V v) { return hn::GetLane(hn::SumOfLanes(d, v)); }
// See Lanes: undoes the minus 1 (no bucket above 0 wraps back to 0).
HWY_INLINE int32_t FirstBucket(hn::Vec<DU> minus_one) {
  return static_cast<int32_t>(hn::GetLane(hn::MinOfLanes(DU(), minus_one)) + 1);
}

void Reduce(D d, const Lanes& lanes, ChunkResult& out) {
  out.source_min = MinOf(d, lanes.source_min);
  out.source_max = MaxOf(d, lanes.source_max);
  out.target_min = MinOf(d, lanes.target_min);
  out.target_max = MaxOf(d, lanes.target_max);
  out.sums.source = SumOf(d, lanes.sum_source);
  out.sums.target = SumOf(d, lanes.sum_target);
  out.sums.abs_error = SumOf(d, lanes.sum_abs);
  out.sums.rel_error = SumOf(d, lanes.sum_rel);
  out.sums.squared_error = SumOf(d, lanes.sum_squared_error);
  out.sums.squared_source = SumOf(d, lanes.sum_squared_source);
  out.sums.squared_target = SumOf(d, lanes.sum_squared_target);
  out.sums.dot = SumOf(d, lanes.sum_dot);
  out.min_abs = MinOf(d, lanes.min_abs);
  out.max_abs = MaxOf(d, lanes.max_abs);
  out.min_rel = MinOf(d, lanes.min_rel);
  out.max_rel = MaxOf(d, lanes.max_rel);
  out.max_magnitude = std::max(-out.source_min, out.source_max);  // max |s|, one op fewer
  out.abs_first_bucket = FirstBucket(lanes.abs_first_bucket);
  out.rel_first_bucket = FirstBucket(lanes.rel_first_bucket);
  out.source_first_axis_bucket = FirstBucket(lanes.source_first_axis_bucket);
  out.error_first_axis_bucket = FirstBucket(lanes.error_first_axis_bucket);
  out.atol_to_pass = MaxOf(d, lanes.atol_to_pass);
  out.rtol_to_pass = MaxOf(d, lanes.rtol_to_pass);
  // A NaN or Inf on either side makes that side's lane sums non-finite.
  out.finite =
      hn::AllTrue(d, hn::And(hn::IsFinite(lanes.sum_source), hn::IsFinite(lanes.sum_target)));
}

// A vector of doubles from float32 or float64 input: float32 is promoted exactly in registers, so
// float32 tensors are read in place, never widened into a buffer.
HWY_INLINE V LoadDouble(D d, const double* HWY_RESTRICT values) { return hn::LoadU(d, values); }
HWY_INLINE V LoadDouble(D d, const float* HWY_RESTRICT values) {
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), values));
}

// Accumulates the whole vectors of a chunk; returns how many elements that covered (the caller
// takes the remainder, fewer than one vector, on the scalar path).
template <typename T>
size_t AccumulateVectors(const T* HWY_RESTRICT source, const T* HWY_RESTRICT target, size_t count,
                         int64_t first_flat, const Tolerance& tolerance, ChunkScratch& scratch,
                         ChunkResult& out) {
  const D d;
  const size_t lanes_per_vector = hn::Lanes(d);
  const size_t whole = count - count % lanes_per_vector;
  Lanes lanes(d);
  int64_t zeros = 0;
  uint32_t failed_offsets[kChunkElements];
  size_t num_failed = 0;
  for (size_t offset = 0; offset < whole; offset += lanes_per_vector) {
    if (offset + kPrefetchDistance < count) {
      hwy::Prefetch(source + offset + kPrefetchDistance);
      hwy::Prefetch(target + offset + kPrefetchDistance);
    }
    const bool inside =
        AccumulateVector(d, LoadDouble(d, source + offset), LoadDouble(d, target + offset),
                         tolerance, offset, lanes, scratch, zeros);
    failed_offsets[num_failed] = static_cast<uint32_t>(offset);
    num_failed += inside ? 0 : 1;
  }
  Reduce(d, lanes, out);
  out.zeros = zeros;
  ScoreFailures(source, target, std::span<const uint32_t>(failed_offsets, num_failed),
                lanes_per_vector, tolerance, first_flat, out);
  return whole;
}

size_t AccumulateFloats(const float* HWY_RESTRICT source, const float* HWY_RESTRICT target,
                        size_t count, int64_t first_flat, const Tolerance& tolerance,
                        ChunkScratch& scratch, ChunkResult& out) {
  return AccumulateVectors(source, target, count, first_flat, tolerance, scratch, out);
}

size_t AccumulateDoubles(const double* HWY_RESTRICT source, const double* HWY_RESTRICT target,
                         size_t count, int64_t first_flat, const Tolerance& tolerance,
                         ChunkScratch& scratch, ChunkResult& out) {
  return AccumulateVectors(source, target, count, first_flat, tolerance, scratch, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace convgate::compare::internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace convgate::compare::internal {

HWY_EXPORT(AccumulateFloats);
HWY_EXPORT(AccumulateDoubles);

namespace {

// The first element of the chunk with |t - s| == abs_error (numpy.argmax's tie rule).
template <typename T>
int64_t FirstIndexOf(std::span<const T> source, std::span<const T> target, double abs_error) {
  for (size_t idx = 0; idx < source.size(); ++idx) {
    if (std::abs(static_cast<double>(target[idx]) - static_cast<double>(source[idx])) ==
        abs_error) {
      return static_cast<int64_t>(idx);
    }
  }
  return 0;  // unreachable: the chunk's maximum is one of its errors
}

template <typename T>
void Commit(const ChunkResult& result, std::span<const T> source, std::span<const T> target,
            int64_t first_flat, Accumulator& acc, Sums& sums) {
  const auto vectorized = static_cast<int64_t>(source.size());
  acc.source.counts.finite += vectorized;
  acc.target.counts.finite += vectorized;
  acc.source.min = std::min(acc.source.min, result.source_min);
  acc.source.max = std::max(acc.source.max, result.source_max);
  acc.target.min = std::min(acc.target.min, result.target_min);
  acc.target.max = std::max(acc.target.max, result.target_max);
  sums.Add(result.sums);
  acc.compared += vectorized;
  acc.zero_errors += result.zeros;
  acc.max_rel_error = std::max(acc.max_rel_error, result.max_rel);
  if (result.max_abs > acc.max_abs_error) {
    acc.max_abs_error = result.max_abs;
    acc.max_abs_flat = first_flat + FirstIndexOf(source, target, result.max_abs);
  }
  acc.peak = std::max(acc.peak, result.max_magnitude);
  acc.value_mismatches += result.mismatches;
  if (result.worst.Beats(acc.worst_value)) acc.worst_value = result.worst;
  acc.atol_to_pass = std::max(acc.atol_to_pass, result.atol_to_pass);
  acc.rtol_to_pass = std::max(acc.rtol_to_pass, result.rtol_to_pass);
}

void CountHistograms(const ChunkResult& result, size_t vectorized, const ChunkScratch& scratch,
                     Accumulator& acc) {
  ErrorHistograms::IndexedPairs pairs;
  pairs.packed = std::span(scratch.packed_indices, vectorized);
  pairs.abs_min = result.min_abs;
  pairs.abs_max = result.max_abs;
  pairs.rel_min = result.min_rel;
  pairs.rel_max = result.max_rel;
  pairs.source_max = result.max_magnitude;
  pairs.abs_first_bucket = result.abs_first_bucket;
  pairs.rel_first_bucket = result.rel_first_bucket;
  pairs.source_first_axis_bucket = result.source_first_axis_bucket;
  pairs.error_first_axis_bucket = result.error_first_axis_bucket;
  acc.histograms.AddIndexed(pairs);
}

// The elements after the last whole vector (fewer than one vector), on the scalar path.
template <typename T>
void AccumulateTail(std::span<const T> source, std::span<const T> target, int64_t first_flat,
                    const Tolerance& tolerance, Accumulator& acc, Sums& sums) {
  double source_tail[64];
  double target_tail[64];
  for (size_t offset = 0; offset < source.size(); offset += std::size(source_tail)) {
    const size_t size = std::min(source.size() - offset, std::size(source_tail));
    std::copy_n(source.begin() + static_cast<ptrdiff_t>(offset), size, source_tail);
    std::copy_n(target.begin() + static_cast<ptrdiff_t>(offset), size, target_tail);
    AccumulateFloat(std::span<const double>(source_tail, size),
                    std::span<const double>(target_tail, size),
                    first_flat + static_cast<int64_t>(offset), tolerance, acc, sums);
  }
}

template <typename T, typename Kernel>
bool AccumulateChunk(Kernel kernel, std::span<const T> source, std::span<const T> target,
                     int64_t first_flat, const Tolerance& tolerance, ChunkScratch& scratch,
                     Accumulator& acc, Sums& sums) {
  ChunkResult result;
  const size_t vectorized =
      kernel(source.data(), target.data(), source.size(), first_flat, tolerance, scratch, result);
  if (!result.finite) return false;
  if (vectorized > 0) {
    Commit(result, source.first(vectorized), target.first(vectorized), first_flat, acc, sums);
    CountHistograms(result, vectorized, scratch, acc);
  }
  AccumulateTail(source.subspan(vectorized), target.subspan(vectorized),
                 first_flat + static_cast<int64_t>(vectorized), tolerance, acc, sums);
  return true;
}

}  // namespace

bool AccumulateFiniteChunk(std::span<const float> source, std::span<const float> target,
                           int64_t first_flat, const Tolerance& tolerance, ChunkScratch& scratch,
                           Accumulator& acc, Sums& sums) {
  return AccumulateChunk(HWY_DYNAMIC_DISPATCH(AccumulateFloats), source, target, first_flat,
                         tolerance, scratch, acc, sums);
}

bool AccumulateFiniteChunk(std::span<const double> source, std::span<const double> target,
                           int64_t first_flat, const Tolerance& tolerance, ChunkScratch& scratch,
                           Accumulator& acc, Sums& sums) {
  return AccumulateChunk(HWY_DYNAMIC_DISPATCH(AccumulateDoubles), source, target, first_flat,
                         tolerance, scratch, acc, sums);
}

}  // namespace convgate::compare::internal
#endif  // HWY_ONCE
