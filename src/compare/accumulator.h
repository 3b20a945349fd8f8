// The streaming core of CompareTensors: one pass over pairs of widened elements, accumulating every
// statistic that does not need the whole error distribution, plus the error histograms the exact
// percentiles are then selected from (select.h).
//
// Work is split into fixed-size blocks. Everything whose value does not depend on the order of
// accumulation (counts, min/max, argmax with its tie rule, histograms) goes into one Accumulator
// per thread, merged in any order. Floating-point sums do depend on it, so each block keeps its
// own Sums and blocks are added in index order: results are bit-identical whatever the number of
// threads.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "convgate/compare/histogram.h"
#include "convgate/compare/tensor_compare.h"
#include "convgate/compare/tolerance.h"

namespace convgate::compare::internal {

// Elements per step of the inner loops: the packed histogram indices of a chunk (8 KiB), and the
// two widened inputs when the dtypes need widening (16 KiB), stay in L1; the per-chunk costs (lane
// reductions, histogram range checks) spread over a thousand elements; and a chunk is short
// enough that the scalar fallback for one holding a NaN or Inf costs little. 512 and 2048
// measured slower here.
inline constexpr int64_t kChunkElements = 1024;

// A chunk-sized buffer allocated on first use: float32 and float64 pairs are read in place, so
// most comparisons never need their widening buffers, and small tensors should not pay for them.
template <typename T>
class LazyChunk {
 public:
  std::span<T> First(size_t size) {
    if (storage_.empty()) storage_.resize(static_cast<size_t>(kChunkElements));
    return {storage_.data(), size};
  }

 private:
  std::vector<T> storage_;
};

// Elements per block, the unit threads take and the unit of summation order (see above). 64Ki:
// big enough that per-block overheads vanish, small enough that a 1M-element tensor makes 16
// blocks to share.
inline constexpr int64_t kBlockElements = int64_t{1} << 16;

// The order-dependent sums of one block, or of everything after MergeSums.
struct Sums {
  double source = 0.0;  // finite source values
  double target = 0.0;  // finite target values
  // Over pairs finite on both sides, e = t - s:
  double abs_error = 0.0;       // |e|
  double rel_error = 0.0;       // |e| / max(|s|, kRelErrorFloor)
  double squared_error = 0.0;   // e^2
  double squared_source = 0.0;  // s^2
  double squared_target = 0.0;  // t^2
  double dot = 0.0;             // s * t

  void Add(const Sums& other);
};

// Adds block sums in index order with Neumaier's compensated summation, so the result carries
// about one rounding per block rather than one per addition across 2000 blocks.
Sums MergeSums(std::span<const Sums> blocks);

// Min/max/sum and counts of one side's values.
struct ValueAccumulator {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0.0;     // SummarizeValues only; CompareTensors keeps its sums in Sums
  ValueSummary counts;  // only the count fields are maintained while streaming

  void Merge(const ValueAccumulator& other);
  // Mean from `sum`.
  ValueSummary Finish(double sum) const;
};

// A failing element that is a candidate for TensorComparison::worst.
struct WorstCandidate {
  int64_t flat = -1;
  double score = -1.0;  // |t - s| / allowed (Inf when allowed is 0); |t - s| when exact
  double abs_error = -1.0;

  // Whether this candidate beats `other`: larger score, then larger |t - s|, then lower index.
  bool Beats(const WorstCandidate& other) const;
};

struct Accumulator {
  ValueAccumulator source;
  ValueAccumulator target;
  NonFiniteSplit non_finite;

  // Over elements finite on both sides.
  int64_t compared = 0;
  int64_t zero_errors = 0;  // pairs with t == s: percentile ranks below this are exactly 0
  double max_rel_error = 0.0;
  double max_abs_error = -1.0;  // below any real error, so the first compared element sets it
  int64_t max_abs_flat = -1;
  double peak = 0.0;  // max |s|
  ErrorHistograms histograms;
  // The report's frontier is collected in a pass of its own (frontier_pass.h).

  // Finite elements outside the tolerance (or unequal, when exact), and the worst of them.
  int64_t value_mismatches = 0;
  WorstCandidate worst_value;

  // See TensorComparison::atol_to_pass / rtol_to_pass.
  double atol_to_pass = 0.0;
  double rtol_to_pass = 0.0;

  // Everything but the sums; any merge order gives the same result.
  void Merge(const Accumulator& other);
};

// Adds one value to a side's summary (NaN/Inf counted, finite ones into min/max/sum).
void AddValue(double value, ValueAccumulator& acc);

// Tolerance comparison of source[i] against target[i], element by element, handling NaN and Inf;
// element i has flat index first_flat + i. The reference for the SIMD path (simd_kernel.h), which
// takes every chunk where both sides are finite. REQUIRES: source.size() == target.size().
void AccumulateFloat(std::span<const double> source, std::span<const double> target,
                     int64_t first_flat, const Tolerance& tolerance, Accumulator& acc, Sums& sums);

// Exact comparison of integer/bool elements widened by WidenToBits; *_signed says how each side's
// bits are to be read. REQUIRES: source.size() == target.size().
void AccumulateExact(std::span<const uint64_t> source, bool source_signed,
                     std::span<const uint64_t> target, bool target_signed, int64_t first_flat,
                     Accumulator& acc, Sums& sums);

// |a - b| of two widened integers, exact up to 2^53 (the difference is taken in the integer
// domain, then converted).
double IntAbsDiff(uint64_t a, bool a_signed, uint64_t b, bool b_signed);

// Whether two widened integers hold the same value.
inline bool IntEqual(uint64_t a, bool a_signed, uint64_t b, bool b_signed) {
  // Equal bits are the same value unless one side reads them as a negative int64 and the other
  // as a uint64 of 2^63 or more.
  return a == b && (a_signed == b_signed || (a >> 63) == 0);
}

// The widened integer as double (int64/uint64 beyond 2^53 round to nearest).
inline double IntToDouble(uint64_t bits, bool is_signed) {
  return is_signed ? static_cast<double>(static_cast<int64_t>(bits)) : static_cast<double>(bits);
}

}  // namespace convgate::compare::internal
