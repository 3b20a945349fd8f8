// The vectorized inner loops of CompareTensors (Highway, dynamic dispatch: the widest of SSE4,
// AVX2 and AVX-512 the CPU has, chosen at run time): the comparison pass (simd_kernel.cc) and the
// percentile selection's scan (select_kernel.cc).
#pragma once

#include <cstdint>
#include <span>

#include "compare/accumulator.h"
#include "convgate/compare/tolerance.h"

namespace convgate::compare::internal {

// Per-chunk histogram indices the kernel writes and the histograms then count (scalar
// increments: the only part of the pass that does not vectorize), packed three to a word as
// ErrorHistograms::IndexedPairs describes.
struct ChunkScratch {
  alignas(64) uint64_t packed_indices[kChunkElements];
};

// AccumulateFloat for one chunk, vectorized; float32 values are read in place (widened in
// registers). Returns false, leaving acc and sums untouched, when an element is NaN or Inf on
// either side (or a side's sum overflows): the caller then runs AccumulateFloat on the chunk,
// which classifies non-finite pairs. Results equal AccumulateFloat's exactly, except that sums
// are added in a different order. REQUIRES: source.size() == target.size() <= kChunkElements.
bool AccumulateFiniteChunk(std::span<const float> source, std::span<const float> target,
                           int64_t first_flat, const Tolerance& tolerance, ChunkScratch& scratch,
                           Accumulator& acc, Sums& sums);
bool AccumulateFiniteChunk(std::span<const double> source, std::span<const double> target,
                           int64_t first_flat, const Tolerance& tolerance, ChunkScratch& scratch,
                           Accumulator& acc, Sums& sums);

// A set of error keys: keys k with k >> shift == prefix. An error's key is the bit pattern of the
// non-negative double |t - s|, whose unsigned order is the numeric order.
struct KeyPrefix {
  uint64_t prefix;
  int shift;
};

// Writes to `out` the keys of the chunk's pairs that are finite on both sides and whose key lies
// in one of `prefixes`, in index order; returns how many. `all_finite` says every value of both
// tensors is known to be finite (the test is then skipped). REQUIRES: source.size() ==
// target.size() <= out.size(), !prefixes.empty(), prefixes sorted by shift.
size_t CollectErrorKeys(std::span<const float> source, std::span<const float> target,
                        std::span<const KeyPrefix> prefixes, bool all_finite,
                        std::span<uint64_t> out);
size_t CollectErrorKeys(std::span<const double> source, std::span<const double> target,
                        std::span<const KeyPrefix> prefixes, bool all_finite,
                        std::span<uint64_t> out);

}  // namespace convgate::compare::internal
