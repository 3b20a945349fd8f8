// Compact error summaries kept in every report so a saved comparison can be re-judged under a new
// policy without re-running anything (`convgate check`).
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
#pragma once

#include <cstdint>
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
  // REQUIRES: value >= 0 (+Inf allowed); NaN is never added (non-finite pairs are counted apart).
  void Add(double value);
  void Merge(const ErrorHistogram& other);

  int64_t count() const { return count_; }
  double min() const;  // exact; 0 when empty
  double max() const;  // exact; 0 when empty

  // The value of rank `rank` (0-based, ascending). REQUIRES: 0 <= rank < count().
  Bracket<double> ValueAtRank(int64_t rank) const;
  // numpy.percentile(values, q), 'linear' method, bracketed. REQUIRES: count() > 0.
  Bracket<double> Percentile(double q) const;
  // How many values are > threshold.
  Bracket<int64_t> CountAbove(double threshold) const;

  // Non-empty buckets as (bucket index, count), ascending, for report.json.
  std::vector<std::pair<int32_t, int64_t>> Sparse() const;
  // Rebuilds a histogram from Sparse() output and the exact min/max; DataLoss when inconsistent.
  static Result<ErrorHistogram> FromSparse(const std::vector<std::pair<int32_t, int64_t>>& buckets,
                                           double min, double max);

 private:
  std::vector<int64_t> counts_;  // dense, allocated on first Add
  int64_t count_ = 0;
  double min_ = 0.0;
  double max_ = 0.0;
};

class JointHistogram {
 public:
  // REQUIRES: both finite and >= 0.
  void Add(double abs_source, double abs_error);
  void Merge(const JointHistogram& other);
  int64_t count() const { return count_; }

  // Elements with abs_error > atol + rtol * abs_source.
  Bracket<int64_t> CountOutside(double atol, double rtol) const;

  // Non-empty cells as (source bucket, error bucket, count), for report.json.
  struct Cell {
    int32_t source_bucket;
    int32_t error_bucket;
    int64_t count;
  };
  std::vector<Cell> Sparse() const;
  static Result<JointHistogram> FromSparse(const std::vector<Cell>& cells);

 private:
  std::vector<int64_t> counts_;  // dense, allocated on first Add
  int64_t count_ = 0;
};

// Everything `convgate check` needs about one output's finite error distribution.
struct ErrorSummary {
  ErrorHistogram abs_error;  // |t - s| over finite pairs
  ErrorHistogram rel_error;  // |t - s| / max(|s|, kRelErrorFloor) over finite pairs
  JointHistogram joint;      // (|s|, |t - s|) over finite pairs
};

}  // namespace convgate::compare
