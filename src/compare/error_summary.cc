#include "convgate/compare/error_summary.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "compare/percentile.h"
#include "convgate/compare/tensor_compare.h"

namespace convgate::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kFrontierShift = 52 - kFrontierSubBits;
constexpr int32_t kFrontierInfBucket = 0x7FF << kFrontierSubBits;

// atol + rtol * |s| as numpy.isclose rounds it. rtol 0 is special cased only so an infinite |s|
// edge does not make 0 * Inf = NaN.
double Allowed(double atol, double rtol, double abs_source) {
  return rtol == 0.0 ? atol : atol + rtol * abs_source;
}

// A tolerance computed from rounded box corners, raised by a few ulps' worth (2^-49 relative) so
// that atol + rtol * |s| rounded as numpy rounds it still admits every pair the real-number bound
// admits: each operation behind `value` rounds by at most 2^-53 relative.
double RaiseForRounding(double value) {
  if (!(value > 0.0)) return 0.0;
  return value * (1.0 + 0x1.0p-49);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// QuantileLadder

std::vector<int64_t> QuantileLadder::AnchorRanks(int64_t count) {
  std::vector<int64_t> ranks;
  if (count <= 0) return ranks;
  for (double q : kLadderPercentiles) {
    const internal::PercentileRank rank = internal::RankOf(count, q);
    ranks.push_back(rank.lower);
    ranks.push_back(rank.upper);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

QuantileLadder QuantileLadder::Of(const ErrorHistogram& histogram) {
  QuantileLadder ladder;
  ladder.count_ = histogram.count();
  ladder.min_ = histogram.min();
  ladder.max_ = histogram.max();
  ladder.ranks_ = AnchorRanks(ladder.count_);
  const std::vector<std::pair<int32_t, int64_t>> buckets = histogram.Sparse();
  size_t bucket_idx = 0;
  int64_t below = 0;  // values in buckets before bucket_idx
  for (int64_t rank : ladder.ranks_) {
    while (rank >= below + buckets[bucket_idx].second) below += buckets[bucket_idx++].second;
    ladder.buckets_.push_back(buckets[bucket_idx].first);
  }
  return ladder;
}

Result<QuantileLadder> QuantileLadder::FromStored(int64_t count, double min, double max,
                                                  std::vector<int32_t> buckets) {
  QuantileLadder ladder;
  ladder.count_ = count;
  ladder.min_ = min;
  ladder.max_ = max;
  ladder.ranks_ = AnchorRanks(count);
  ladder.buckets_ = std::move(buckets);
  const auto fail = [](const std::string& what) {
    return Status::DataLoss("quantile ladder: " + what);
  };
  if (count < 0) return fail("negative count " + std::to_string(count));
  if (ladder.buckets_.size() != ladder.ranks_.size()) {
    return fail(std::to_string(ladder.buckets_.size()) + " buckets for " +
                std::to_string(ladder.ranks_.size()) + " anchor ranks of " + std::to_string(count) +
                " values");
  }
  if (count == 0) {
    if (min != 0.0 || max != 0.0) return fail("no values but min/max are not 0");
    return ladder;
  }
  if (!(min >= 0.0 && min <= max)) return fail("min and max do not satisfy 0 <= min <= max");
  const std::vector<int32_t>& b = ladder.buckets_;
  if (!std::is_sorted(b.begin(), b.end()) || b.front() < ErrorHistogram::BucketOf(min) ||
      b.back() > ErrorHistogram::BucketOf(max) || b.front() > ErrorHistogram::kInfBucket) {
    return fail("buckets are not ascending within the buckets of min and max");
  }
  return ladder;
}

Bracket<double> QuantileLadder::ValueAtRank(int64_t rank) const {
  if (rank <= 0) return {min_, min_};
  if (rank >= count_ - 1) return {max_, max_};
  const auto at = std::lower_bound(ranks_.begin(), ranks_.end(), rank);
  const auto bucket_of = [&](std::vector<int64_t>::const_iterator it) {
    return buckets_[static_cast<size_t>(it - ranks_.begin())];
  };
  if (at != ranks_.end() && *at == rank) {
    const int32_t bucket = bucket_of(at);
    return {std::max(ErrorHistogram::BucketLower(bucket), min_),
            std::min(ErrorHistogram::BucketUpper(bucket), max_)};
  }
  // Between two anchors: at least the lower anchor's bucket, at most the upper one's.
  const double lo =
      at == ranks_.begin() ? min_ : std::max(ErrorHistogram::BucketLower(bucket_of(at - 1)), min_);
  const double hi =
      at == ranks_.end() ? max_ : std::min(ErrorHistogram::BucketUpper(bucket_of(at)), max_);
  return {lo, hi};
}

Bracket<double> QuantileLadder::Percentile(double q) const {
  const internal::PercentileRank rank = internal::RankOf(count_, q);
  return internal::LerpBrackets(ValueAtRank(rank.lower), ValueAtRank(rank.upper), rank);
}

// ---------------------------------------------------------------------------------------------
// JointCells

namespace {

// The bucket of a cell `width` JointHistogram buckets wide holding JointHistogram bucket `fine`.
int32_t CoarseBucket(int32_t fine, int width) { return fine == 0 ? 0 : (fine - 1) / width + 1; }

std::vector<JointHistogram::Cell> Coarsen(const std::vector<JointHistogram::Cell>& fine,
                                          int width) {
  std::vector<JointHistogram::Cell> cells;
  for (const JointHistogram::Cell& cell : fine) {
    const JointHistogram::Cell coarse{CoarseBucket(cell.source_bucket, width),
                                      CoarseBucket(cell.error_bucket, width), cell.count};
    cells.push_back(coarse);
  }
  // Merging keeps the order by source bucket but not within it.
  std::sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) {
    return std::pair(a.source_bucket, a.error_bucket) < std::pair(b.source_bucket, b.error_bucket);
  });
  std::vector<JointHistogram::Cell> merged;
  for (const JointHistogram::Cell& cell : cells) {
    if (!merged.empty() && merged.back().source_bucket == cell.source_bucket &&
        merged.back().error_bucket == cell.error_bucket) {
      merged.back().count += cell.count;
    } else {
      merged.push_back(cell);
    }
  }
  return merged;
}

}  // namespace

JointCells JointCells::Of(const JointHistogram& histogram) {
  JointCells joint;
  joint.count_ = histogram.count();
  joint.cells_ = histogram.Sparse();
  while (joint.cells_.size() > static_cast<size_t>(kMaxJointCells) &&
         joint.width_ < kMaxJointCellWidth) {
    joint.width_ *= 2;
    joint.cells_ = Coarsen(histogram.Sparse(), joint.width_);
  }
  return joint;
}

Result<JointCells> JointCells::FromStored(int width,
                                          const std::vector<JointHistogram::Cell>& cells) {
  if (width < 1 || width > kMaxJointCellWidth || (width & (width - 1)) != 0) {
    return Status::DataLoss("joint error cells: width of " + std::to_string(width) +
                            " quarter octaves (expected 1, 2, 4, 8 or 16)");
  }
  JointCells joint;
  joint.width_ = width;
  const int32_t axis_buckets = CoarseBucket(JointHistogram::kAxisBuckets - 1, width) + 1;
  const JointHistogram::Cell* previous = nullptr;
  for (const JointHistogram::Cell& cell : cells) {
    const bool in_range = cell.source_bucket >= 0 && cell.source_bucket < axis_buckets &&
                          cell.error_bucket >= 0 && cell.error_bucket < axis_buckets;
    const bool ascending =
        previous == nullptr || std::pair(cell.source_bucket, cell.error_bucket) >
                                   std::pair(previous->source_bucket, previous->error_bucket);
    if (!in_range || !ascending || cell.count <= 0 ||
        cell.count > std::numeric_limits<int64_t>::max() - joint.count_) {
      return Status::DataLoss("joint error cells: bad cell (" + std::to_string(cell.source_bucket) +
                              ", " + std::to_string(cell.error_bucket) + ") with count " +
                              std::to_string(cell.count));
    }
    joint.count_ += cell.count;
    previous = &cell;
  }
  joint.cells_ = cells;
  return joint;
}

double JointCells::AxisLower(int32_t bucket) const {
  if (bucket <= 0) return 0.0;
  return JointHistogram::AxisLower((bucket - 1) * width_ + 1);
}

double JointCells::AxisUpper(int32_t bucket) const {
  if (bucket <= 0) return JointHistogram::AxisUpper(0);
  return JointHistogram::AxisUpper(std::min(bucket * width_, JointHistogram::kAxisBuckets - 1));
}

Bracket<int64_t> JointCells::CountOutside(double atol, double rtol) const {
  int64_t sure = 0;
  int64_t maybe = 0;
  // atol + rtol * s rounds monotonically in s (built with -ffp-contract=off, as the engine), so
  // comparing against it at the cell's extreme sources decides the whole cell.
  for (const JointHistogram::Cell& cell : cells_) {
    const double allowed_at_lowest = Allowed(atol, rtol, AxisLower(cell.source_bucket));
    const double allowed_at_highest = Allowed(atol, rtol, AxisUpper(cell.source_bucket));
    if (AxisLower(cell.error_bucket) > allowed_at_highest) {
      sure += cell.count;
    } else if (AxisUpper(cell.error_bucket) > allowed_at_lowest) {
      maybe += cell.count;
    }
  }
  return {sure, sure + maybe};
}

// ---------------------------------------------------------------------------------------------
// Frontier

int32_t Frontier::BucketOf(double value) {
  return static_cast<int32_t>((std::bit_cast<uint64_t>(value) & ~(uint64_t{1} << 63)) >>
                              kFrontierShift);
}

double Frontier::BucketLower(int32_t bucket) {
  return std::bit_cast<double>(static_cast<uint64_t>(bucket) << kFrontierShift);
}

double Frontier::BucketUpper(int32_t bucket) {
  if (bucket >= kFrontierInfBucket) return kInf;
  return std::bit_cast<double>((static_cast<uint64_t>(bucket + 1) << kFrontierShift) - 1);
}

Frontier Frontier::Of(int depth, bool complete, int64_t count, const std::vector<Pair>& pairs) {
  Frontier frontier;
  frontier.depth_ = depth;
  frontier.complete_ = complete;
  frontier.count_ = count;
  for (const Pair& pair : pairs) {
    frontier.points_.push_back({BucketOf(pair.abs_source), BucketOf(pair.abs_error)});
  }
  std::sort(frontier.points_.begin(), frontier.points_.end(), [](const Point& a, const Point& b) {
    return std::pair(a.source_bucket, a.error_bucket) < std::pair(b.source_bucket, b.error_bucket);
  });
  return frontier;
}

Result<Frontier> Frontier::FromStored(int depth, bool complete, int64_t count,
                                      std::vector<Point> points) {
  if (depth < 0) return Status::DataLoss("frontier: depth " + std::to_string(depth) + " < 0");
  if (count < static_cast<int64_t>(points.size())) {
    return Status::DataLoss("frontier: " + std::to_string(points.size()) + " points of " +
                            std::to_string(count) + " pairs");
  }
  const Point* previous = nullptr;
  for (const Point& point : points) {
    const bool in_range = point.source_bucket >= 0 && point.source_bucket <= kFrontierInfBucket &&
                          point.error_bucket >= 0 && point.error_bucket <= kFrontierInfBucket;
    const bool ascending =
        previous == nullptr || std::pair(point.source_bucket, point.error_bucket) >=
                                   std::pair(previous->source_bucket, previous->error_bucket);
    if (!in_range || !ascending) {
      return Status::DataLoss("frontier: bad point (" + std::to_string(point.source_bucket) + ", " +
                              std::to_string(point.error_bucket) + ")");
    }
    previous = &point;
  }
  Frontier frontier;
  frontier.depth_ = depth;
  frontier.complete_ = complete;
  frontier.count_ = count;
  frontier.points_ = std::move(points);
  return frontier;
}

Frontier::Count Frontier::CountOutside(double atol, double rtol) const {
  int64_t sure = 0;
  int64_t maybe = 0;
  // A box is surely outside when its lowest error exceeds the allowance at its largest source,
  // surely inside when its largest error is within the allowance at its smallest source.
  for (const Point& point : points_) {
    if (BucketLower(point.error_bucket) > Allowed(atol, rtol, BucketUpper(point.source_bucket))) {
      ++sure;
    } else if (BucketUpper(point.error_bucket) >
               Allowed(atol, rtol, BucketLower(point.source_bucket))) {
      ++maybe;
    }
  }
  Count count;
  count.outside = {sure, sure + maybe};
  // Fewer than depth() kept pairs outside: no pair left out can be (it would bring depth() kept
  // pairs dominating it along).
  count.whole = complete_ || (depth_ > 0 && sure + maybe < depth_);
  return count;
}

std::optional<double> Frontier::AtolToPass(double rtol) const {
  if (depth_ == 0) return std::nullopt;
  double needed = 0.0;
  for (const Point& point : points_) {
    const double term =
        rtol == 0.0 ? 0.0 : rtol * BucketLower(point.source_bucket);  // never Inf * 0
    needed = std::max(needed, BucketUpper(point.error_bucket) - term);
  }
  return RaiseForRounding(needed);
}

std::optional<double> Frontier::RtolToPass(double atol) const {
  if (depth_ == 0) return std::nullopt;
  double needed = 0.0;
  for (const Point& point : points_) {
    const double over = BucketUpper(point.error_bucket) - atol;
    if (!(over > 0.0)) continue;
    const double source = BucketLower(point.source_bucket);
    if (source == 0.0) return kInf;  // no rtol absorbs an error where |s| may be 0
    needed = std::max(needed, over / source);
  }
  return RaiseForRounding(needed);
}

Bracket<double> Frontier::Percentile(double q, bool relative) const {
  // Percentiles rise with every value, so the boxes' lowest and highest values bound it. The pairs
  // not kept are exact: 0 on both.
  std::vector<double> lowest(static_cast<size_t>(count_) - points_.size(), 0.0);
  std::vector<double> highest = lowest;
  for (const Point& point : points_) {
    const double error_lo = BucketLower(point.error_bucket);
    const double error_hi = BucketUpper(point.error_bucket);
    if (!relative) {
      lowest.push_back(error_lo);
      highest.push_back(error_hi);
      continue;
    }
    const double source_lo = std::max(BucketLower(point.source_bucket), kRelErrorFloor);
    const double source_hi = std::max(BucketUpper(point.source_bucket), kRelErrorFloor);
    lowest.push_back(error_lo / source_hi);
    highest.push_back(error_hi / source_lo);
  }
  std::sort(lowest.begin(), lowest.end());
  std::sort(highest.begin(), highest.end());
  const internal::PercentileRank rank = internal::RankOf(count_, q);
  const auto at = [&](int64_t index) {
    return Bracket<double>{lowest[static_cast<size_t>(index)], highest[static_cast<size_t>(index)]};
  };
  return internal::LerpBrackets(at(rank.lower), at(rank.upper), rank);
}

// ---------------------------------------------------------------------------------------------
// ErrorSummary

bool ErrorSummary::Covers(int64_t compared) const {
  if (frontier.complete()) return frontier.count() == compared;
  return joint.count() == compared && abs_error.count() == compared &&
         rel_error.count() == compared;
}

Bracket<double> ErrorSummary::Percentile(double q, bool relative) const {
  if (frontier.complete()) return frontier.Percentile(q, relative);
  return (relative ? rel_error : abs_error).Percentile(q);
}

Bracket<int64_t> ErrorSummary::CountOutside(double atol, double rtol) const {
  const Frontier::Count kept = frontier.CountOutside(atol, rtol);
  if (frontier.complete()) return kept.outside;
  const Bracket<int64_t> cells = joint.CountOutside(atol, rtol);
  if (kept.whole) {
    return {std::max(kept.outside.lo, cells.lo), std::min(kept.outside.hi, cells.hi)};
  }
  return {std::max(kept.outside.lo, cells.lo), cells.hi};
}

ErrorSummary SummarizeErrors(const ErrorHistograms& histograms, Frontier frontier) {
  ErrorSummary summary;
  if (frontier.complete()) {
    summary.frontier = std::move(frontier);
    return summary;
  }
  summary.abs_error = QuantileLadder::Of(histograms.abs_error);
  summary.rel_error = QuantileLadder::Of(histograms.rel_error);
  summary.frontier = std::move(frontier);
  summary.joint = JointCells::Of(histograms.joint);
  return summary;
}

}  // namespace convgate::compare
