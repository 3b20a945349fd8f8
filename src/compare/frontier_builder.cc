#include "compare/frontier_builder.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>

namespace convgate::compare::internal {
namespace {

// A block's first prune comes after this many candidates (its first chunk lets everything
// through); later prunes when the buffer has doubled, so pruning costs O(log) per candidate.
constexpr size_t kFirstPrune = 512;
// The filter of a block that gave up (its skyband would not fit at any depth): rejects everything.
constexpr uint32_t kRejectAll = std::numeric_limits<uint32_t>::max();

}  // namespace

FrontierBuilder::FrontierBuilder() : next_prune_(kFirstPrune), threshold_(kRows, 0) {}

void FrontierBuilder::Add(double abs_source, double abs_error) {
  if (abs_error == 0.0) return;  // no tolerance rejects an exact pair
  block_.push_back({abs_source, abs_error});
  if (block_.size() >= next_prune_) PruneBlock();
}

void FrontierBuilder::Prune(std::vector<Frontier::Pair>& pairs, int depth, std::vector<int>* depths,
                            size_t sorted_prefix) {
  if (depths != nullptr) depths->clear();
  if (depth <= 0) {
    pairs.clear();
    return;
  }
  // In order of ascending |s|, then descending |t - s|, the pairs dominating one are exactly the
  // earlier ones with an error at least as large (equal pairs: the earlier one dominates). A
  // pruned buffer stays in that order, so only what was added since is sorted, then merged.
  const auto order = [](const Frontier::Pair& a, const Frontier::Pair& b) {
    if (a.abs_source != b.abs_source) return a.abs_source < b.abs_source;
    return a.abs_error > b.abs_error;
  };
  const auto middle = pairs.begin() + static_cast<std::ptrdiff_t>(sorted_prefix);
  std::sort(middle, pairs.end(), order);
  std::inplace_merge(pairs.begin(), middle, pairs.end(), order);
  std::vector<double> largest;  // the `depth` largest errors seen so far, ascending
  largest.reserve(static_cast<size_t>(depth) + 1);
  size_t kept = 0;
  for (const Frontier::Pair& pair : pairs) {
    // Most pairs are dominated by all `depth` largest errors: inserting one would only remove it
    // again.
    if (largest.size() == static_cast<size_t>(depth) && pair.abs_error <= largest.front()) {
      continue;
    }
    const auto at = std::lower_bound(largest.begin(), largest.end(), pair.abs_error);
    const auto dominators = static_cast<int>(largest.end() - at);
    largest.insert(at, pair.abs_error);
    if (largest.size() > static_cast<size_t>(depth)) largest.erase(largest.begin());
    pairs[kept++] = pair;
    if (depths != nullptr) depths->push_back(dominators);
  }
  pairs.resize(kept);
}

void FrontierBuilder::PruneBlock() {
  std::vector<int> depths;
  Prune(block_, block_depth_, &depths, block_sorted_);
  // Too many pairs to keep at this depth: the deepest that fits (each pair's dominator count is
  // exact below block_depth_, so the smaller skyband is read off directly).
  while (block_.size() > kBlockPairs && block_depth_ > 0) {
    int deepest_fit = 0;
    for (int depth = block_depth_ - 1; depth > 0 && deepest_fit == 0; --depth) {
      const auto size =
          std::count_if(depths.begin(), depths.end(), [&](int d) { return d < depth; });
      if (static_cast<size_t>(size) <= kBlockPairs) deepest_fit = depth;
    }
    block_depth_ = deepest_fit;
    Prune(block_, block_depth_, &depths, block_.size());
  }
  block_sorted_ = block_.size();
  next_prune_ = std::max(kFirstPrune, 2 * block_.size());
  RefreshThresholds();
}

void FrontierBuilder::RefreshThresholds() {
  if (block_depth_ == 0) {
    std::fill(threshold_.begin(), threshold_.end(), kRejectAll);
    return;
  }
  std::fill(threshold_.begin(), threshold_.end(), 0);
  const auto depth = static_cast<size_t>(block_depth_);
  if (block_.size() < depth) return;
  struct Bucketed {
    int32_t row;
    uint32_t bucket;
  };
  std::vector<Bucketed> bucketed;
  bucketed.reserve(block_.size());
  for (const Frontier::Pair& pair : block_) {
    bucketed.push_back({static_cast<int32_t>(RowOf(pair.abs_source)),
                        static_cast<uint32_t>(ErrorHistogram::BucketOf(pair.abs_error))});
  }
  // A pruned block is in ascending |s| already (Prune's order), so this is usually a check.
  const auto by_row = [](const Bucketed& a, const Bucketed& b) { return a.row < b.row; };
  if (!std::is_sorted(bucketed.begin(), bucketed.end(), by_row)) {
    std::sort(bucketed.begin(), bucketed.end(), by_row);
  }
  // The depth-th largest error bucket among pairs of smaller |s|: a pair of row R in a smaller
  // bucket has `depth` pairs with smaller |s| and larger |t - s|. Row 0 ([0, 2^-126)) uses pairs
  // with |s| exactly 0, which no |s| undercuts.
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> largest;
  const auto push = [&](uint32_t bucket) {
    largest.push(bucket);
    if (largest.size() > depth) largest.pop();
  };
  for (const Frontier::Pair& pair : block_) {
    if (pair.abs_source == 0.0)
      push(static_cast<uint32_t>(ErrorHistogram::BucketOf(pair.abs_error)));
  }
  if (largest.size() == depth) threshold_[0] = largest.top();
  largest = {};
  // The threshold changes only past a row holding pairs: each run of rows up to the next such row
  // takes one value.
  size_t next = 0;
  while (next < bucketed.size()) {
    const int32_t row = bucketed[next].row;
    while (next < bucketed.size() && bucketed[next].row == row) push(bucketed[next++].bucket);
    if (largest.size() < depth) continue;
    const int32_t until = next < bucketed.size() ? bucketed[next].row : kRows - 1;
    std::fill(threshold_.begin() + row + 1, threshold_.begin() + until + 1, largest.top());
  }
}

void FrontierBuilder::EndBlock() {
  if (block_.empty() && block_depth_ == kMaxDepth) return;
  PruneBlock();
  Join(std::move(block_), block_depth_);
  block_.clear();
  block_sorted_ = 0;
  block_depth_ = kMaxDepth;
  next_prune_ = kFirstPrune;
  std::fill(threshold_.begin(), threshold_.end(), 0);
}

void FrontierBuilder::Join(std::vector<Frontier::Pair> pairs, int depth) {
  depth_ = std::min(depth_, depth);
  const size_t sorted = kept_.size();
  kept_.insert(kept_.end(), pairs.begin(), pairs.end());
  Prune(kept_, depth_, nullptr, sorted);
}

void FrontierBuilder::Merge(const FrontierBuilder& other) {
  Join(other.kept_, other.depth_);
  if (!other.block_.empty() || other.block_depth_ != kMaxDepth) {
    std::vector<Frontier::Pair> block = other.block_;
    Prune(block, other.block_depth_, nullptr);
    Join(std::move(block), other.block_depth_);
  }
}

Frontier FrontierBuilder::Finish(int64_t compared, int64_t inexact) const {
  FrontierBuilder all;
  all.Merge(*this);
  if (all.depth_ == 0) return Frontier();
  if (inexact == 0) return Frontier::Of(all.depth_, true, compared, {});
  std::vector<Frontier::Pair> pairs = all.kept_;
  std::vector<int> depths;
  Prune(pairs, all.depth_, &depths);
  // The deepest skyband that fits (pairs with fewer than `depth` dominators).
  int depth = all.depth_;
  const auto size_at = [&](int d) {
    return std::count_if(depths.begin(), depths.end(),
                         [d](int dominators) { return dominators < d; });
  };
  while (depth > 0 && size_at(depth) > kMaxFrontierPoints) --depth;
  if (depth == 0) return Frontier();
  std::vector<Frontier::Pair> kept;
  for (size_t idx = 0; idx < pairs.size(); ++idx) {
    if (depths[idx] < depth) kept.push_back(pairs[idx]);
  }
  const bool complete = static_cast<int64_t>(kept.size()) == inexact;
  return Frontier::Of(depth, complete, compared, kept);
}

}  // namespace convgate::compare::internal
