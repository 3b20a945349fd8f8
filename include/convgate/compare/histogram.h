// The comparison engine's error histograms, from which it selects exact percentiles and derives
// the compact ErrorSummary a report keeps for `convgate check` (error_summary.h).
//
// ErrorHistogram is log-linear (HDR-style): a value's bucket is the top bits of its IEEE double,
// 11 exponent bits and kHistogramSubBits mantissa bits, so bucketing is one shift, and every bucket
// spans at most 1/2^kHistogramSubBits of its lower edge. With 6 sub-bits that is 1/64: a quantile
// read from the histogram is bracketed by an interval no wider than 1.6% of its value (and is exact
// where the interval collapses onto the exact min or max). Counts are exact.
//
// JointHistogram counts pairs (|source|, |target - source|) in coarser log-linear cells
// (kJointSubBits per octave on each axis), enough to bound how many elements a new (atol, rtol)
// would reject: cells wholly outside the new tolerance count for sure, cells straddling its
// boundary make the count a range.
//
// Thread safety: none; each thread fills its own histogram and the results are merged (counts add
// exactly, so the merged histogram does not depend on the merge order).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::compare {

inline constexpr int kHistogramSubBits = 6;
inline constexpr int kJointSubBits = 2;

// A [lo, hi] bracket: the exact value lies within it. lo == hi when exact.
template <typename T>
struct Bracket {
  T lo{};
  T hi{};
  bool exact() const { return lo == hi; }
};

class ErrorHistogram {
 public:
  // Bucket indices run from 0 (zero and the smallest denormals) to kInfBucket, which holds +Inf
  // only. Bucket b holds the doubles whose bit pattern is in [b << 46, (b + 1) << 46).
  static constexpr int32_t kInfBucket = 0x7FF << kHistogramSubBits;

  // REQUIRES: value >= 0 (+Inf allowed); NaN is never added (non-finite pairs are counted apart).
  // -0 counts as +0.
  void Add(double value);
  // Add() for each value, faster: one range check per call instead of one per value.
  void AddAll(std::span<const double> values);
  void Merge(const ErrorHistogram& other);

  int64_t count() const { return count_; }
  double min() const;  // exact; 0 when empty
  double max() const;  // exact; 0 when empty

  // The value of rank `rank` (0-based, ascending). REQUIRES: 0 <= rank < count().
  Bracket<double> ValueAtRank(int64_t rank) const;
  // numpy.percentile(values, q), 'linear' method, bracketed. REQUIRES: count() > 0, 0 <= q <= 100.
  // Exact (lo == hi, numpy's value bit for bit) when both neighbouring ranks are exact; otherwise
  // widened by a few ulps so interpolation rounding never leaves the true value outside. NaN where
  // numpy's interpolation gives NaN (an +Inf neighbour weighted 0).
  Bracket<double> Percentile(double q) const;
  // How many values are > threshold. Exact unless a bucket straddles the threshold.
  Bracket<int64_t> CountAbove(double threshold) const;
  // How many values lie in `bucket` (0 outside the range).
  int64_t BucketCount(int32_t bucket) const;

  // Non-empty buckets as (bucket index, count), ascending, for report.json.
  std::vector<std::pair<int32_t, int64_t>> Sparse() const;
  // Rebuilds a histogram from Sparse() output and the exact min/max; DataLoss when inconsistent
  // (bucket out of range, not ascending, count <= 0, min/max not in the first/last bucket).
  static Result<ErrorHistogram> FromSparse(const std::vector<std::pair<int32_t, int64_t>>& buckets,
                                           double min, double max);

  // The bucket of a value (REQUIRES: value >= 0, not NaN) and the smallest and largest doubles in
  // a bucket.
  static int32_t BucketOf(double value);
  static double BucketLower(int32_t bucket);
  static double BucketUpper(int32_t bucket);

  // Same counts, min and max.
  friend bool operator==(const ErrorHistogram& a, const ErrorHistogram& b);

 private:
  friend struct ErrorHistograms;  // AddIndexed counts into all three histograms in one loop

  // Makes the dense part cover buckets [first, last] (bucket 0 always has its own slot).
  void Cover(int32_t first, int32_t last);
  // [lo, hi] of the values in `bucket`: its edges clamped to the exact min and max.
  Bracket<double> BucketRange(int32_t bucket) const;
  // Calls visit(bucket, count) for the non-empty buckets in ascending order until it returns true.
  template <typename Visit>
  void VisitBuckets(Visit visit) const;
  size_t DenseSize() const { return counts_.empty() ? 0 : counts_.size() - 1; }
  // Where a bucket's count lives: its dense slot, or the last slot for bucket 0 (an unsigned min,
  // branch-free for the engine's counting loop). REQUIRES: bucket is 0 or covered.
  size_t SlotOf(uint64_t bucket) const {
    return static_cast<size_t>(
        std::min<uint64_t>(bucket - static_cast<uint64_t>(first_bucket_), DenseSize()));
  }

  // counts_[0, DenseSize()) count buckets first_bucket_ (>= 1) onwards, grown on demand: a
  // tensor's errors span a few dozen octaves, so this stays a few KiB where the full range
  // (kInfBucket + 1 buckets) would take 1 MiB. counts_.back() counts bucket 0 (zero and the
  // smallest denormals): zero errors are common and far from the rest (bucket 60000 holds 1e-5),
  // so one dense range over both would take half a MiB.
  std::vector<int64_t> counts_;
  int32_t first_bucket_ = 0;
  int64_t count_ = 0;
  double min_ = 0.0;
  double max_ = 0.0;
};

class JointHistogram {
 public:
  // Axis buckets (the same on both axes): 0 holds [0, 2^-126) (zero, float32 and float64
  // denormals, tiny float64 values), 1 .. kAxisBuckets - 2 hold 2^-126 .. 2^128 with kJointSubBits
  // mantissa bits (4 buckets per octave), and kAxisBuckets - 1 holds [2^128, +Inf] (float64 beyond
  // float32's range). The clamped range keeps dense storage bounded.
  static constexpr int32_t kAxisBuckets = ((128 + 126) << kJointSubBits) + 2;

  // REQUIRES: both >= 0 and not NaN. +Inf lands in the top bucket (|t - s| of two finite values
  // can overflow).
  void Add(double abs_source, double abs_error);
  void Merge(const JointHistogram& other);
  int64_t count() const { return count_; }

  // Elements with abs_error > atol + rtol * abs_source (the bound rounded as numpy.isclose
  // rounds it). Exact when no non-empty cell straddles the boundary. REQUIRES: atol, rtol >= 0.
  Bracket<int64_t> CountOutside(double atol, double rtol) const;

  // Non-empty cells as (source bucket, error bucket, count), for report.json, ascending by
  // (source bucket, error bucket).
  struct Cell {
    int32_t source_bucket;
    int32_t error_bucket;
    int64_t count;
    friend bool operator==(const Cell&, const Cell&) = default;
  };
  std::vector<Cell> Sparse() const;
  // DataLoss when a bucket is out of range, cells are not ascending or a count is <= 0.
  static Result<JointHistogram> FromSparse(const std::vector<Cell>& cells);

  // The axis bucket of a value (REQUIRES: >= 0, not NaN) and the smallest and largest values in
  // an axis bucket.
  static int32_t AxisBucketOf(double value);
  static double AxisLower(int32_t bucket);
  static double AxisUpper(int32_t bucket);
  // A cell as one integer: source bucket << kCellKeyShift | error bucket.
  static constexpr int kCellKeyShift = 10;  // 2^10 >= kAxisBuckets
  static uint64_t CellKey(double abs_source, double abs_error) {
    return static_cast<uint64_t>(AxisBucketOf(abs_source)) << kCellKeyShift |
           static_cast<uint64_t>(AxisBucketOf(abs_error));
  }

  friend bool operator==(const JointHistogram& a, const JointHistogram& b);

 private:
  friend struct ErrorHistograms;

  // Makes the box cover source buckets [source_first, source_last] and error buckets
  // [error_first, error_last] (bucket 0 of each axis always has its own row / column).
  void Cover(int32_t source_first, int32_t source_last, int32_t error_first, int32_t error_last);
  // Adds other's counts cell by cell. REQUIRES: this box covers other's.
  void AddCounts(const JointHistogram& other);
  // Where a cell's count lives: row and column by unsigned mins (bucket 0 to its own row or
  // column), then a multiply-add: branch-free for the engine's counting loop.
  size_t IndexOf(uint64_t key) const {
    constexpr uint64_t kErrorMask = (uint64_t{1} << kCellKeyShift) - 1;
    const uint64_t row = std::min<uint64_t>((key >> kCellKeyShift) - source_first_, rows_);
    const uint64_t col = std::min<uint64_t>((key & kErrorMask) - error_first_, cols_);
    return static_cast<size_t>(row * stride_ + col);
  }
  int32_t SourceBucketOfRow(int32_t row) const { return row == rows_ ? 0 : source_first_ + row; }
  int32_t ErrorBucketOfColumn(int32_t col) const { return col == cols_ ? 0 : error_first_ + col; }

  // Dense counts over a box of cells, source-major, grown on demand: rows_ source buckets from
  // source_first_ (>= 1) then one row for source bucket 0; in each row cols_ error buckets from
  // error_first_ (>= 1) then one column for error bucket 0, in the row's padding. A tensor's box
  // is typically a hundred or two cells a side where the whole plane would take 8 MiB; zeros
  // (ReLU outputs, exact errors) get their own row and column rather than stretching the box to
  // bucket 0. Rows are padded by a cache line: rows a power of two apart would map a column's
  // cells to the same few cache sets.
  static constexpr uint64_t kRowPadding = 8;
  std::vector<int64_t> counts_;
  int32_t source_first_ = 0;
  int32_t error_first_ = 0;
  int32_t rows_ = 0;
  int32_t cols_ = 0;
  uint64_t stride_ = kRowPadding;  // cols_ + kRowPadding
  int64_t count_ = 0;
};

// One output's finite error distribution as the engine accumulates it.
struct ErrorHistograms {
  ErrorHistogram abs_error;  // |t - s| over finite pairs
  ErrorHistogram rel_error;  // |t - s| / max(|s|, kRelErrorFloor) over finite pairs
  JointHistogram joint;      // (|s|, |t - s|) over finite pairs

  // Bulk insertion for the comparison engine, which computes the indices with SIMD and packs the
  // three of a pair into one word (one load instead of three in the counting loop, the part of
  // a comparison that does not vectorize):
  //   packed = abs bucket | rel bucket << kRelShift | joint cell key << kJointShift
  // with ErrorHistogram::BucketOf(|t - s|), BucketOf(relative error) (18 bits each) and
  // JointHistogram::CellKey(|s|, |t - s|) (20 bits).
  static constexpr int kRelShift = 20;
  static constexpr int kJointShift = 40;
  struct IndexedPairs {
    std::span<const uint64_t> packed;
    double abs_min, abs_max;  // exact extremes of the values behind the buckets
    double rel_min, rel_max;
    double source_max;  // of |s|
    // The smallest bucket above 0 present, or 0 when there is none: the dense ranges' lower
    // ends (bucket 0 has its own slot).
    int32_t abs_first_bucket, rel_first_bucket;
    int32_t source_first_axis_bucket, error_first_axis_bucket;
  };
  // REQUIRES: the extremes match the packed indices.
  void AddIndexed(const IndexedPairs& pairs);
};

}  // namespace convgate::compare
