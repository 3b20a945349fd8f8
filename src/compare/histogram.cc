#include "convgate/compare/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "compare/percentile.h"

namespace convgate::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint64_t kMagnitudeMask = ~(uint64_t{1} << 63);  // clears the sign bit, so -0 is +0
constexpr int kBucketShift = 52 - kHistogramSubBits;
// Growing a histogram by at least an octave (or 8 joint buckets, two octaves) on the side it grows
// keeps reallocations to a handful per tensor even when errors creep outwards slowly.
constexpr int32_t kGrowSlack = 1 << kHistogramSubBits;
constexpr int32_t kJointGrowSlack = 8;

uint64_t Bits(double value) { return std::bit_cast<uint64_t>(value) & kMagnitudeMask; }
double FromBits(uint64_t bits) { return std::bit_cast<double>(bits); }

Status HistogramDataLoss(const std::string& what) {
  return Status::DataLoss("error histogram: " + what);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ErrorHistogram

int32_t ErrorHistogram::BucketOf(double value) {
  return static_cast<int32_t>(Bits(value) >> kBucketShift);
}

double ErrorHistogram::BucketLower(int32_t bucket) {
  return FromBits(static_cast<uint64_t>(bucket) << kBucketShift);
}

double ErrorHistogram::BucketUpper(int32_t bucket) {
  if (bucket >= kInfBucket) return kInf;
  return FromBits((static_cast<uint64_t>(bucket + 1) << kBucketShift) - 1);
}

void ErrorHistogram::Cover(int32_t first, int32_t last) {
  first = std::max(first, 1);  // bucket 0 has its own slot
  if (counts_.empty()) counts_.assign(1, 0);
  if (last < first) return;
  const auto size = static_cast<int32_t>(DenseSize());
  if (size > 0 && first >= first_bucket_ && last < first_bucket_ + size) return;
  int32_t new_first = first;
  int32_t new_last = last;
  if (size > 0) {
    const int32_t slack = std::max(kGrowSlack, size);  // geometric: O(final size) copying
    new_first = first < first_bucket_ ? std::max(1, first - slack) : first_bucket_;
    const int32_t old_last = first_bucket_ + size - 1;
    new_last = last > old_last ? std::min(kInfBucket, last + slack) : old_last;
  }
  std::vector<int64_t> grown(static_cast<size_t>(new_last - new_first + 2), 0);
  std::copy(counts_.begin(), counts_.end() - 1, grown.begin() + (first_bucket_ - new_first));
  grown.back() = counts_.back();
  counts_ = std::move(grown);
  first_bucket_ = new_first;
}

template <typename Visit>
void ErrorHistogram::VisitBuckets(Visit visit) const {
  if (counts_.empty()) return;
  if (counts_.back() != 0 && visit(0, counts_.back())) return;
  for (size_t idx = 0; idx < DenseSize(); ++idx) {
    if (counts_[idx] != 0 && visit(first_bucket_ + static_cast<int32_t>(idx), counts_[idx])) return;
  }
}

void ErrorHistogram::Add(double value) { AddAll(std::span<const double>(&value, 1)); }

void ErrorHistogram::AddAll(std::span<const double> values) {
  if (values.empty()) return;
  // Pass 1 finds the extremes and the smallest bucket above 0, pass 2 counts without range
  // checks. The values come from an L1-sized chunk, so reading them twice costs little.
  double low = kInf;
  double high = 0.0;
  int32_t first = kInfBucket + 1;
  for (double value : values) {
    low = std::min(low, value);
    high = std::max(high, value);
    const int32_t bucket = BucketOf(value);
    if (bucket > 0) first = std::min(first, bucket);
  }
  low += 0.0;  // -0 to +0
  Cover(first, BucketOf(high));
  for (double value : values) ++counts_[SlotOf(static_cast<uint64_t>(BucketOf(value)))];
  min_ = count_ == 0 ? low : std::min(min_, low);
  max_ = count_ == 0 ? high : std::max(max_, high);
  count_ += static_cast<int64_t>(values.size());
}

void ErrorHistogram::Merge(const ErrorHistogram& other) {
  if (other.count_ == 0) return;
  const auto other_size = static_cast<int32_t>(other.DenseSize());
  Cover(other.first_bucket_, other_size > 0 ? other.first_bucket_ + other_size - 1 : 0);
  for (size_t idx = 0; idx < other.DenseSize(); ++idx) {
    counts_[SlotOf(static_cast<uint64_t>(other.first_bucket_) + idx)] += other.counts_[idx];
  }
  counts_.back() += other.counts_.back();
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
}

double ErrorHistogram::min() const { return min_; }
double ErrorHistogram::max() const { return max_; }

int64_t ErrorHistogram::BucketCount(int32_t bucket) const {
  if (counts_.empty() || bucket < 0) return 0;
  if (bucket == 0) return counts_.back();
  const int64_t offset = int64_t{bucket} - first_bucket_;
  if (offset < 0 || offset >= static_cast<int64_t>(DenseSize())) return 0;
  return counts_[static_cast<size_t>(offset)];
}

Bracket<double> ErrorHistogram::BucketRange(int32_t bucket) const {
  return {std::max(BucketLower(bucket), min_), std::min(BucketUpper(bucket), max_)};
}

Bracket<double> ErrorHistogram::ValueAtRank(int64_t rank) const {
  if (rank <= 0) return {min_, min_};
  if (rank >= count_ - 1) return {max_, max_};
  Bracket<double> result{max_, max_};
  int64_t below = 0;  // values in the buckets visited so far
  VisitBuckets([&](int32_t bucket, int64_t count) {
    below += count;
    if (rank >= below) return false;
    result = BucketRange(bucket);
    return true;
  });
  return result;
}

Bracket<double> ErrorHistogram::Percentile(double q) const {
  const internal::PercentileRank rank = internal::RankOf(count_, q);
  return internal::LerpBrackets(ValueAtRank(rank.lower), ValueAtRank(rank.upper), rank);
}

Bracket<int64_t> ErrorHistogram::CountAbove(double threshold) const {
  int64_t sure = 0;
  int64_t maybe = 0;
  VisitBuckets([&](int32_t bucket, int64_t count) {
    const Bracket<double> range = BucketRange(bucket);
    if (range.lo > threshold) {
      sure += count;
    } else if (range.hi > threshold) {
      maybe += count;
    }
    return false;
  });
  return {sure, sure + maybe};
}

std::vector<std::pair<int32_t, int64_t>> ErrorHistogram::Sparse() const {
  std::vector<std::pair<int32_t, int64_t>> buckets;
  VisitBuckets([&](int32_t bucket, int64_t count) {
    buckets.emplace_back(bucket, count);
    return false;
  });
  return buckets;
}

Result<ErrorHistogram> ErrorHistogram::FromSparse(
    const std::vector<std::pair<int32_t, int64_t>>& buckets, double min, double max) {
  ErrorHistogram histogram;
  if (buckets.empty()) {
    if (min != 0.0 || max != 0.0) return HistogramDataLoss("no buckets but min/max are not 0");
    return histogram;
  }
  if (!(min >= 0.0 && min <= max)) {
    return HistogramDataLoss("min " + std::to_string(min) + " and max " + std::to_string(max) +
                             " do not satisfy 0 <= min <= max");
  }
  if (BucketOf(min) != buckets.front().first || BucketOf(max) != buckets.back().first) {
    return HistogramDataLoss("min/max lie outside the first/last bucket");
  }
  const int32_t first_dense =
      buckets.front().first > 0 || buckets.size() == 1 ? buckets.front().first : buckets[1].first;
  histogram.Cover(first_dense, buckets.back().first);
  int32_t previous = -1;
  for (const auto& [bucket, count] : buckets) {
    if (bucket <= previous || bucket > kInfBucket || count <= 0 ||
        count > std::numeric_limits<int64_t>::max() - histogram.count_) {
      return HistogramDataLoss("bad bucket " + std::to_string(bucket) + " (count " +
                               std::to_string(count) + ") after bucket " +
                               std::to_string(previous));
    }
    histogram.counts_[histogram.SlotOf(static_cast<uint64_t>(bucket))] = count;
    histogram.count_ += count;
    previous = bucket;
  }
  if (histogram.count_ == 1 && min != max) return HistogramDataLoss("one value but min != max");
  histogram.min_ = min;
  histogram.max_ = max;
  return histogram;
}

bool operator==(const ErrorHistogram& a, const ErrorHistogram& b) {
  return a.count_ == b.count_ && a.min_ == b.min_ && a.max_ == b.max_ && a.Sparse() == b.Sparse();
}

// ---------------------------------------------------------------------------------------------
// JointHistogram

namespace {

constexpr int kJointShift = 52 - kJointSubBits;
// Top bits (exponent and kJointSubBits mantissa bits) of 2^-126, the lower edge of axis bucket 1.
constexpr int32_t kJointFirstTopBits = (1023 - 126) << kJointSubBits;

}  // namespace

int32_t JointHistogram::AxisBucketOf(double value) {
  const auto top_bits = static_cast<int32_t>(Bits(value) >> kJointShift);
  return std::clamp(top_bits - kJointFirstTopBits + 1, 0, kAxisBuckets - 1);
}

double JointHistogram::AxisLower(int32_t bucket) {
  if (bucket <= 0) return 0.0;
  return FromBits(static_cast<uint64_t>(bucket - 1 + kJointFirstTopBits) << kJointShift);
}

double JointHistogram::AxisUpper(int32_t bucket) {
  if (bucket >= kAxisBuckets - 1) return kInf;
  return FromBits((static_cast<uint64_t>(bucket + kJointFirstTopBits) << kJointShift) - 1);
}

namespace {

// One axis of a growing box, dense over [first, first + size) with first >= 1 (bucket 0 has its
// own row or column), extended to cover [want_first, want_last]: with slack on a growing side (at
// least `min_slack`, or the current size: geometric growth). Returns false when nothing above
// bucket 0 is wanted or had.
bool GrowAxis(int32_t first, int32_t size, int32_t min_slack, int32_t& want_first,
              int32_t& want_last) {
  constexpr int32_t kLast = JointHistogram::kAxisBuckets - 1;
  want_first = std::max(want_first, 1);
  if (size == 0) return want_last >= want_first;
  if (want_last < want_first) {
    want_first = first;
    want_last = first + size - 1;
    return true;
  }
  const int32_t slack = std::max(min_slack, size);
  want_first = want_first < first ? std::max(1, want_first - slack) : first;
  want_last = want_last >= first + size ? std::min(kLast, want_last + slack) : first + size - 1;
  return true;
}

}  // namespace

void JointHistogram::Cover(int32_t source_first, int32_t source_last, int32_t error_first,
                           int32_t error_last) {
  const auto covered = [](int32_t first, int32_t last, int32_t have_first, int32_t have_size) {
    first = std::max(first, 1);
    return last < first || (first >= have_first && last < have_first + have_size);
  };
  if (!counts_.empty() && covered(source_first, source_last, source_first_, rows_) &&
      covered(error_first, error_last, error_first_, cols_)) {
    return;
  }
  JointHistogram grown;
  if (GrowAxis(source_first_, rows_, kJointGrowSlack, source_first, source_last)) {
    grown.source_first_ = source_first;
    grown.rows_ = source_last - source_first + 1;
  }
  if (GrowAxis(error_first_, cols_, kJointGrowSlack, error_first, error_last)) {
    grown.error_first_ = error_first;
    grown.cols_ = error_last - error_first + 1;
  }
  grown.stride_ = static_cast<uint64_t>(grown.cols_) + kRowPadding;
  grown.counts_.assign(static_cast<size_t>(grown.rows_ + 1) * grown.stride_, 0);
  grown.count_ = count_;
  grown.AddCounts(*this);
  *this = std::move(grown);
}

void JointHistogram::AddCounts(const JointHistogram& other) {
  if (other.counts_.empty()) return;
  for (int32_t row = 0; row <= other.rows_; ++row) {
    const uint64_t source_key = static_cast<uint64_t>(other.SourceBucketOfRow(row))
                                << kCellKeyShift;
    const int64_t* from = other.counts_.data() + static_cast<size_t>(row) * other.stride_;
    for (int32_t col = 0; col <= other.cols_; ++col) {
      if (from[col] == 0) continue;
      counts_[IndexOf(source_key | static_cast<uint64_t>(other.ErrorBucketOfColumn(col)))] +=
          from[col];
    }
  }
}

void JointHistogram::Add(double abs_source, double abs_error) {
  const int32_t source_bucket = AxisBucketOf(abs_source);
  const int32_t error_bucket = AxisBucketOf(abs_error);
  Cover(source_bucket, source_bucket, error_bucket, error_bucket);
  ++counts_[IndexOf(CellKey(abs_source, abs_error))];
  ++count_;
}

void JointHistogram::Merge(const JointHistogram& other) {
  if (other.count_ == 0) return;
  Cover(other.source_first_, other.source_first_ + other.rows_ - 1, other.error_first_,
        other.error_first_ + other.cols_ - 1);
  AddCounts(other);
  count_ += other.count_;
}

Bracket<int64_t> JointHistogram::CountOutside(double atol, double rtol) const {
  int64_t sure = 0;
  int64_t maybe = 0;
  // atol + rtol * s rounds monotonically in s (built with -ffp-contract=off, as the engine), so
  // comparing against it at the cell's extreme sources decides the whole cell. rtol 0 is special
  // cased only so the top bucket's +Inf edge does not make 0 * Inf = NaN.
  const auto allowed = [&](double abs_source) {
    return rtol == 0.0 ? atol : atol + rtol * abs_source;
  };
  for (const Cell& cell : Sparse()) {
    const double allowed_at_lowest = allowed(AxisLower(cell.source_bucket));
    const double allowed_at_highest = allowed(AxisUpper(cell.source_bucket));
    if (AxisLower(cell.error_bucket) > allowed_at_highest) {
      sure += cell.count;
    } else if (AxisUpper(cell.error_bucket) > allowed_at_lowest) {
      maybe += cell.count;
    }
  }
  return {sure, sure + maybe};
}

std::vector<JointHistogram::Cell> JointHistogram::Sparse() const {
  std::vector<Cell> cells;
  if (counts_.empty()) return cells;
  // Ascending: bucket 0's row and column (stored last) come first.
  for (int32_t row_step = 0; row_step <= rows_; ++row_step) {
    const int32_t row = row_step == 0 ? rows_ : row_step - 1;
    const int64_t* counts = counts_.data() + static_cast<size_t>(row) * stride_;
    for (int32_t col_step = 0; col_step <= cols_; ++col_step) {
      const int32_t col = col_step == 0 ? cols_ : col_step - 1;
      if (counts[col] == 0) continue;
      cells.push_back(Cell{SourceBucketOfRow(row), ErrorBucketOfColumn(col), counts[col]});
    }
  }
  return cells;
}

Result<JointHistogram> JointHistogram::FromSparse(const std::vector<Cell>& cells) {
  JointHistogram histogram;
  const Cell* previous = nullptr;
  for (const Cell& cell : cells) {
    const bool in_range = cell.source_bucket >= 0 && cell.source_bucket < kAxisBuckets &&
                          cell.error_bucket >= 0 && cell.error_bucket < kAxisBuckets;
    const bool ascending = previous == nullptr || cell.source_bucket > previous->source_bucket ||
                           (cell.source_bucket == previous->source_bucket &&
                            cell.error_bucket > previous->error_bucket);
    if (!in_range || !ascending || cell.count <= 0 ||
        cell.count > std::numeric_limits<int64_t>::max() - histogram.count_) {
      return Status::DataLoss(
          "joint error histogram: bad cell (" + std::to_string(cell.source_bucket) + ", " +
          std::to_string(cell.error_bucket) + ") with count " + std::to_string(cell.count));
    }
    histogram.Cover(cell.source_bucket, cell.source_bucket, cell.error_bucket, cell.error_bucket);
    histogram.counts_[histogram.IndexOf(static_cast<uint64_t>(cell.source_bucket) << kCellKeyShift |
                                        static_cast<uint64_t>(cell.error_bucket))] = cell.count;
    histogram.count_ += cell.count;
    previous = &cell;
  }
  return histogram;
}

bool operator==(const JointHistogram& a, const JointHistogram& b) {
  const auto same = [](const JointHistogram::Cell& x, const JointHistogram::Cell& y) {
    return x.source_bucket == y.source_bucket && x.error_bucket == y.error_bucket &&
           x.count == y.count;
  };
  const std::vector<JointHistogram::Cell> a_cells = a.Sparse();
  const std::vector<JointHistogram::Cell> b_cells = b.Sparse();
  return a.count_ == b.count_ &&
         std::equal(a_cells.begin(), a_cells.end(), b_cells.begin(), b_cells.end(), same);
}

// ---------------------------------------------------------------------------------------------
// ErrorHistograms

namespace {

// Bucket to slot for a dense range [first, first + size) followed by bucket 0's slot: the
// histograms' SlotOf / IndexOf arithmetic on copies held in registers.
class SlotMap {
 public:
  SlotMap(int32_t first, size_t size) : first_(static_cast<uint64_t>(first)), size_(size) {}
  uint64_t operator()(uint64_t bucket) const { return std::min<uint64_t>(bucket - first_, size_); }

 private:
  uint64_t first_;
  uint64_t size_;
};

}  // namespace

void ErrorHistograms::AddIndexed(const IndexedPairs& pairs) {
  const size_t size = pairs.packed.size();
  if (size == 0) return;
  const int32_t abs_last = ErrorHistogram::BucketOf(pairs.abs_max);
  const int32_t rel_last = ErrorHistogram::BucketOf(pairs.rel_max);
  abs_error.Cover(pairs.abs_first_bucket, abs_last);
  rel_error.Cover(pairs.rel_first_bucket, rel_last);
  joint.Cover(pairs.source_first_axis_bucket, JointHistogram::AxisBucketOf(pairs.source_max),
              pairs.error_first_axis_bucket, JointHistogram::AxisBucketOf(pairs.abs_max));
  // Everything the loop needs in locals: the counts are int64_t, which may alias the uint64_t
  // members, so the compiler would otherwise reload them after every increment.
  const SlotMap abs_slots(abs_error.first_bucket_, abs_error.DenseSize());
  const SlotMap rel_slots(rel_error.first_bucket_, rel_error.DenseSize());
  const SlotMap rows(joint.source_first_, static_cast<size_t>(joint.rows_));
  const SlotMap cols(joint.error_first_, static_cast<size_t>(joint.cols_));
  const uint64_t stride = joint.stride_;
  int64_t* abs_counts = abs_error.counts_.data();
  int64_t* rel_counts = rel_error.counts_.data();
  int64_t* joint_counts = joint.counts_.data();
  constexpr uint64_t kBucketMask = (uint64_t{1} << kRelShift) - 1;
  constexpr uint64_t kErrorMask = (uint64_t{1} << JointHistogram::kCellKeyShift) - 1;
  const auto joint_index = [&](uint64_t packed) {
    const uint64_t key = packed >> kJointShift;
    return rows(key >> JointHistogram::kCellKeyShift) * stride + cols(key & kErrorMask);
  };
  if (ErrorHistogram::BucketOf(pairs.abs_min) == abs_last &&
      ErrorHistogram::BucketOf(pairs.rel_min) == rel_last) {
    // All errors in one bucket (identical outputs: all 0): every increment would wait for the
    // previous one to the same counter; add them at once instead.
    abs_counts[abs_slots(static_cast<uint64_t>(abs_last))] += static_cast<int64_t>(size);
    rel_counts[rel_slots(static_cast<uint64_t>(rel_last))] += static_cast<int64_t>(size);
    for (uint64_t packed : pairs.packed) ++joint_counts[joint_index(packed)];
  } else {
    for (uint64_t packed : pairs.packed) {
      ++abs_counts[abs_slots(packed & kBucketMask)];
      ++rel_counts[rel_slots((packed >> kRelShift) & kBucketMask)];
      ++joint_counts[joint_index(packed)];
    }
  }
  const auto note = [size](ErrorHistogram& histogram, double min, double max) {
    min += 0.0;  // -0 to +0
    histogram.min_ = histogram.count_ == 0 ? min : std::min(histogram.min_, min);
    histogram.max_ = histogram.count_ == 0 ? max : std::max(histogram.max_, max);
    histogram.count_ += static_cast<int64_t>(size);
  };
  note(abs_error, pairs.abs_min, pairs.abs_max);
  note(rel_error, pairs.rel_min, pairs.rel_max);
  joint.count_ += static_cast<int64_t>(size);
}

}  // namespace convgate::compare
