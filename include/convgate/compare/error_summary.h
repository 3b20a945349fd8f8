// What a report keeps of one output's finite error distribution, so that `convgate check` can
// judge a saved comparison again under another policy without the tensors. Its size is bounded
// whatever the tensor's size (about 1 KB of compact JSON at most), and every part answers one kind
// of re-judgement:
//
//   - Frontier: elementwise verdicts under any atol and rtol when few mismatches are allowed (the
//     usual mismatch_ppm of 0 included). It keeps the pairs (|s|, |t - s|) of the skyband of depth
//     k: every pair that fewer than k others dominate (smaller or equal |s| and larger or equal
//     |t - s|), among the pairs with |t - s| > 0 (no tolerance rejects an exact pair). Whether |t -
//     s| > atol + rtol * |s| is monotone in both, so when a pair is outside a tolerance, so is
//     every pair dominating it: a pair left out has k kept pairs outside with it, and a count of
//     fewer than k kept pairs outside is the tensor's count. The maximum over all pairs of |t - s|
//     - rtol * |s| or (|t - s| - atol) / |s| (the tolerances that would pass) is reached on kept
//     pairs too. Each pair is stored as a box of 1/1024 of an octave (kFrontierSubBits), so a count
//     is decided unless a tolerance passes within 0.07% of a kept pair.
//   - QuantileLadder (|t - s| and the relative error): percentiles, for --check-error-stat median
//     and pNN. The values at the ranks numpy blends for each percentile of kLadderPercentiles,
//     bracketed by their 1/64-octave buckets (1.6%); other percentiles lie between two rungs.
//   - JointCells: counts of (|s|, |t - s|) on a log grid of 1/4 octave (coarser when that takes
//   more
//     than kMaxJointCells cells), bracketing elementwise counts when more mismatches are allowed
//     than the frontier is deep.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "convgate/compare/histogram.h"
#include "convgate/core/status.h"

namespace convgate::compare {

// The percentiles a QuantileLadder holds: the common --check-error-stat choices, denser in the
// tail, where thresholds usually fall. Each rung costs about 5 bytes of report.json.
inline constexpr double kLadderPercentiles[] = {1,  5,  10, 25, 50, 60,   70,   75,   80,    85,
                                                90, 95, 97, 98, 99, 99.5, 99.8, 99.9, 99.95, 99.99};

// Mantissa bits of a frontier box (a 2^-10 = 0.1% wide bucket, as ErrorHistogram's at 6 bits).
inline constexpr int kFrontierSubBits = 10;
// Pairs a Frontier stores at most (about 10 bytes each in report.json): enough for depth 2 to 3 on
// typical 1000-element outputs (the depth-1 skyband of real conversions measured 4 to 24 pairs),
// and every pair of an output of up to 24 elements.
inline constexpr int kMaxFrontierPoints = 24;
// Cells JointCells stores at most before halving its resolution, down to cells of four octaves
// (kMaxJointCellWidth quarter octaves). Measured on torchvision logits: 1/4-octave cells number 300
// to 400, one-octave cells about 100 (300 bytes); 48 cells of two octaves still decide 99% of
// elementwise re-judgements at mismatch_ppm up to 10% (bench/rejudge.sh).
inline constexpr int kMaxJointCells = 48;
inline constexpr int kMaxJointCellWidth = 16;

class QuantileLadder {
 public:
  QuantileLadder() = default;
  // The rungs of a histogram's values.
  static QuantileLadder Of(const ErrorHistogram& histogram);
  // Rebuilt from count(), min(), max() and buckets(); DataLoss when they disagree (bucket count not
  // the number of anchor ranks, buckets descending, min or max outside the first or last bucket).
  static Result<QuantileLadder> FromStored(int64_t count, double min, double max,
                                           std::vector<int32_t> buckets);

  // The ranks whose values a ladder of `count` values keeps, ascending and distinct: the two order
  // statistics numpy blends for each percentile of kLadderPercentiles.
  static std::vector<int64_t> AnchorRanks(int64_t count);

  int64_t count() const { return count_; }
  double min() const { return min_; }  // exact; 0 when empty
  double max() const { return max_; }  // exact; 0 when empty
  // The ErrorHistogram bucket of the value at each anchor rank.
  const std::vector<int32_t>& buckets() const { return buckets_; }

  // The value of rank `rank` (0-based, ascending), bracketed: its bucket at an anchor rank, else
  // the span between the neighbouring anchors. REQUIRES: 0 <= rank < count().
  Bracket<double> ValueAtRank(int64_t rank) const;
  // numpy.percentile(values, q), 'linear' method, bracketed as ErrorHistogram::Percentile.
  // REQUIRES: count() > 0, 0 <= q <= 100.
  Bracket<double> Percentile(double q) const;

  friend bool operator==(const QuantileLadder&, const QuantileLadder&) = default;

 private:
  int64_t count_ = 0;
  double min_ = 0.0;
  double max_ = 0.0;
  std::vector<int64_t> ranks_;  // AnchorRanks(count_)
  std::vector<int32_t> buckets_;
};

class JointCells {
 public:
  JointCells() = default;
  // The histogram in cells 1, 2, 4, 8 or 16 quarter octaves wide: the finest with at most
  // kMaxJointCells non-empty cells, else 16.
  static JointCells Of(const JointHistogram& histogram);
  // Rebuilt from width() and cells(); DataLoss when width is not one of those, or a cell is out of
  // range, not ascending or has a count <= 0.
  static Result<JointCells> FromStored(int width, const std::vector<JointHistogram::Cell>& cells);

  // Cell width in JointHistogram axis buckets (quarter octaves).
  int width() const { return width_; }
  // Non-empty cells ascending by (source bucket, error bucket), in axis buckets of this width:
  // bucket 0 holds [0, 2^-126), bucket b >= 1 JointHistogram's buckets ((b - 1) * w + 1) to (b * w)
  // with w = width().
  const std::vector<JointHistogram::Cell>& cells() const { return cells_; }
  int64_t count() const { return count_; }

  // Pairs with |t - s| > atol + rtol * |s|, bracketed by the cells the boundary crosses.
  // REQUIRES: atol, rtol >= 0.
  Bracket<int64_t> CountOutside(double atol, double rtol) const;

  friend bool operator==(const JointCells&, const JointCells&) = default;

 private:
  double AxisLower(int32_t bucket) const;
  double AxisUpper(int32_t bucket) const;

  int width_ = 1;
  std::vector<JointHistogram::Cell> cells_;
  int64_t count_ = 0;
};

class Frontier {
 public:
  // A kept pair: the kFrontierSubBits buckets of |s| and |t - s| (the top bits of the doubles,
  // as ErrorHistogram::BucketOf at 10 bits). The exact values lie within the buckets' edges.
  struct Point {
    int32_t source_bucket;
    int32_t error_bucket;
    friend bool operator==(const Point&, const Point&) = default;
  };
  // A pair as the engine measured it.
  struct Pair {
    double abs_source;
    double abs_error;
  };

  Frontier() = default;  // depth 0: nothing kept
  // The skyband of depth `depth` of a tensor's `count` finite pairs, `pairs` exactly (any order);
  // `complete` when they are every pair with |t - s| > 0.
  static Frontier Of(int depth, bool complete, int64_t count, const std::vector<Pair>& pairs);
  // Rebuilt from depth(), complete(), count() and points(); DataLoss when depth < 0, count is
  // below the number of points, a bucket is out of range, or points are not ascending by (source
  // bucket, error bucket).
  static Result<Frontier> FromStored(int depth, bool complete, int64_t count,
                                     std::vector<Point> points);

  // Every pair with |t - s| > 0 dominated by fewer than depth() others is kept; 0: nothing is
  // known.
  int depth() const { return depth_; }
  // Every pair with |t - s| > 0 is kept (the other count() - points().size() pairs are exact).
  bool complete() const { return complete_; }
  // The tensor's finite pairs.
  int64_t count() const { return count_; }
  // Ascending by (source bucket, error bucket).
  const std::vector<Point>& points() const { return points_; }

  struct Count {
    Bracket<int64_t> outside;  // kept pairs outside the tolerance (lo: surely, hi: possibly)
    bool whole = false;        // outside also brackets the tensor's count
  };
  // Pairs with |t - s| > atol + rtol * |s| (rounded as numpy.isclose rounds it). REQUIRES: atol,
  // rtol >= 0.
  Count CountOutside(double atol, double rtol) const;
  // Upper bounds of the smallest atol under which every finite pair passes with `rtol`, and of the
  // smallest rtol with `atol` (+Inf when a pair with |s| = 0 exceeds atol); nullopt at depth 0.
  std::optional<double> AtolToPass(double rtol) const;
  std::optional<double> RtolToPass(double atol) const;
  // numpy.percentile of |t - s| (or of the relative error) over the kept pairs and the exact ones,
  // bracketed by the boxes. REQUIRES: complete(), count() > 0, 0 <= q <= 100.
  Bracket<double> Percentile(double q, bool relative) const;

  static double BucketLower(int32_t bucket);
  static double BucketUpper(int32_t bucket);
  static int32_t BucketOf(double value);

  friend bool operator==(const Frontier&, const Frontier&) = default;

 private:
  int depth_ = 0;
  bool complete_ = false;
  int64_t count_ = 0;
  std::vector<Point> points_;
};

// Everything `convgate check` needs about one output's finite error distribution. When the
// frontier is complete (it holds every inexact pair: outputs of up to kMaxFrontierPoints elements,
// or identical ones) it answers everything and the ladders and joint cells are left empty.
struct ErrorSummary {
  QuantileLadder abs_error;  // |t - s| over finite pairs
  QuantileLadder rel_error;  // |t - s| / max(|s|, kRelErrorFloor) over finite pairs
  Frontier frontier;
  JointCells joint;

  // Whether this summarizes `compared` finite pairs (a report written without one does not).
  bool Covers(int64_t compared) const;
  // Finite pairs with |t - s| > atol + rtol * |s|: from the frontier when it decides, else the
  // joint cells narrowed by it. REQUIRES: Covers(the pairs compared), atol, rtol >= 0.
  Bracket<int64_t> CountOutside(double atol, double rtol) const;
  // numpy.percentile of |t - s| or of the relative error, bracketed. REQUIRES: Covers(the pairs
  // compared) with at least one pair, 0 <= q <= 100.
  Bracket<double> Percentile(double q, bool relative) const;

  friend bool operator==(const ErrorSummary&, const ErrorSummary&) = default;
};

// The summary of the engine's histograms and skyband (`frontier` from its builder).
ErrorSummary SummarizeErrors(const ErrorHistograms& histograms, Frontier frontier);

}  // namespace convgate::compare
