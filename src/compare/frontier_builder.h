// Collects the pairs (|s|, |t - s|) a Frontier keeps (error_summary.h) in one streaming pass
// (frontier_pass.h), without a buffer per element: the skyband of depth k, every pair fewer than k
// others dominate (|s'| <= |s| and |t' - s'| >= |t - s|).
//
// Work happens per block of the engine (kBlockElements): a cheap filter on the pair's buckets
// (RowOf, ErrorHistogram::BucketOf) drops pairs that k pairs already seen in the block surely
// dominate, the rest are buffered and pruned exactly from time to time, and at the block's end its
// skyband joins the worker's. The filter and the pruning only use the block's own pairs, so what a
// block contributes, and the depth it can afford (a block whose skyband exceeds kBlockPairs pairs
// lowers its depth), do not depend on which thread ran it; the skyband of the union is then the
// same for any thread count, as every other result of CompareTensors.
//
// Thread safety: none; one builder per worker, merged at the end.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "convgate/compare/error_summary.h"

namespace convgate::compare::internal {

class FrontierBuilder {
 public:
  // The deepest skyband collected: a Frontier stores at most kMaxFrontierPoints pairs, and a
  // skyband of depth k has at least k of them (all of a smaller tensor).
  static constexpr int kMaxDepth = kMaxFrontierPoints;
  // Pairs a block's skyband may hold before the block lowers its depth (16 bytes each): real
  // conversions' depth-32 skybands of a 64Ki-element block measured 600 to 1100 pairs.
  static constexpr size_t kBlockPairs = 2048;

  FrontierBuilder();

  // The filter's rows: |s| in buckets of 1/64 octave (row 0: [0, 2^-126), then 2^-126 .. 2^128,
  // the last row beyond). As fine as the error buckets: with quarter-octave rows, data whose error
  // grows with |s| (a relative error, the usual case) let most pairs through, as pairs of a row
  // are compared only with lower rows, and pruning them cost 8x the rest of the comparison.
  static constexpr int kRowSubBits = 6;
  static constexpr int32_t kRows = ((128 + 126) << kRowSubBits) + 2;
  static uint32_t RowOf(double abs_source) {
    const auto bits = std::bit_cast<uint64_t>(abs_source);
    constexpr int64_t kFirst = int64_t{1023 - 126} << kRowSubBits;  // 2^-126's top bits
    const int64_t row = static_cast<int64_t>(bits >> (52 - kRowSubBits)) - kFirst + 1;
    return static_cast<uint32_t>(row < 0 ? 0 : row >= kRows ? kRows - 1 : row);
  }

  // Whether a finite pair with these buckets (RowOf(|s|), ErrorHistogram::BucketOf(|t - s|)) may
  // belong to the current block's skyband; a pair it rejects is dominated by kept pairs of the
  // block. Cheap: one table load.
  bool MayKeep(uint32_t row, uint64_t abs_bucket) const { return abs_bucket >= threshold_[row]; }
  // Buffers a finite pair of the current block (callers may skip pairs MayKeep rejects); an exact
  // pair (|t - s| = 0) is dropped, as no tolerance rejects it.
  void Add(double abs_source, double abs_error);
  // Ends the current block (the next Add starts another): prunes it to its skyband and joins it to
  // the pairs kept so far.
  void EndBlock();
  // Joins another worker's pairs (its current block is ended as by EndBlock).
  void Merge(const FrontierBuilder& other);

  // The frontier of every pair added: the skyband of the largest depth (at most the depth every
  // block afforded) that fits kMaxFrontierPoints pairs. `compared` is the number of finite pairs
  // added and `inexact` those with |t - s| > 0, to tell whether the frontier holds them all.
  Frontier Finish(int64_t compared, int64_t inexact) const;

 private:
  // Exactly prunes `pairs` to those dominated by fewer than `depth` others among them; with
  // `depths`, also each kept pair's number of dominators. The first `sorted_prefix` pairs are
  // already in the order Prune leaves them in (a buffer pruned before).
  static void Prune(std::vector<Frontier::Pair>& pairs, int depth, std::vector<int>* depths,
                    size_t sorted_prefix = 0);
  // Prunes the block's buffer, lowering block_depth_ until its skyband fits kBlockPairs, and
  // recomputes the filter from what remains.
  void PruneBlock();
  void RefreshThresholds();
  // Joins a pruned block's pairs at `depth`.
  void Join(std::vector<Frontier::Pair> pairs, int depth);

  std::vector<Frontier::Pair> block_;  // the current block's candidates
  size_t block_sorted_ = 0;            // block_'s pruned (sorted) prefix
  int block_depth_ = kMaxDepth;
  size_t next_prune_;  // prune when block_ reaches this size
  // Per row (RowOf), the smallest |t - s| histogram bucket a pair needs to pass
  // the filter (0 lets everything through).
  std::vector<uint32_t> threshold_;

  std::vector<Frontier::Pair> kept_;  // the skyband of the ended blocks, at depth_
  int depth_ = kMaxDepth;
};

}  // namespace convgate::compare::internal
