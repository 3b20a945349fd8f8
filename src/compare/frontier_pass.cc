#include "compare/frontier_pass.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "compare/accumulator.h"
#include "compare/frontier_builder.h"
#include "compare/parallel.h"
#include "compare/widen.h"

namespace convgate::compare::internal {
namespace {

// Calls per_pair(|s|, |t - s|) for each finite pair of `size` T elements at `source` and `target`
// with |t - s| > 0 (computed in double, as pass 1 computes it). Elements are read with memcpy
// (plain loads once compiled), so the bytes need not be aligned for T: float32 tensors are read
// in place even when they are .npz members mapped where their zip header left them.
template <typename T, typename PerPair>
void InexactPairsOf(const std::byte* source, const std::byte* target, size_t size,
                    PerPair& per_pair) {
  for (size_t idx = 0; idx < size; ++idx) {
    T source_value;
    T target_value;
    std::memcpy(&source_value, source + idx * sizeof(T), sizeof(T));
    std::memcpy(&target_value, target + idx * sizeof(T), sizeof(T));
    const double s = static_cast<double>(source_value);
    const double abs_error = std::abs(static_cast<double>(target_value) - s);
    if (!(abs_error > 0.0) || !std::isfinite(abs_error) || !std::isfinite(s)) continue;
    per_pair(std::abs(s), abs_error);
  }
}

// Calls per_pair(worker, |s|, |t - s|) for every finite pair with |t - s| > 0 (no tolerance
// rejects an exact pair, so no frontier holds one) on `workers` threads, float32 pairs in place
// and others a chunk at a time widened to double; end_block(worker) after each engine block.
template <typename PerPair, typename EndBlock>
void ForEachInexactPair(const Tensor& source, const Tensor& target, int workers, PerPair per_pair,
                        EndBlock end_block) {
  const int64_t count = source.num_elements();
  const int64_t blocks = (count + kBlockElements - 1) / kBlockElements;
  const bool float32 = source.dtype() == DType::kFloat32 && target.dtype() == DType::kFloat32;
  std::vector<std::vector<double>> buffers(2 * static_cast<size_t>(workers));
  ForEachBlock(blocks, workers, [&](int worker, int64_t block) {
    const auto pair = [&](double abs_source, double abs_error) {
      per_pair(worker, abs_source, abs_error);
    };
    const int64_t begin = block * kBlockElements;
    const int64_t end = std::min(count, begin + kBlockElements);
    if (float32) {
      const size_t offset = static_cast<size_t>(begin) * sizeof(float);
      InexactPairsOf<float>(source.bytes().data() + offset, target.bytes().data() + offset,
                            static_cast<size_t>(end - begin), pair);
      end_block(worker);
      return;
    }
    std::vector<double>& s_chunk = buffers[2 * static_cast<size_t>(worker)];
    std::vector<double>& t_chunk = buffers[2 * static_cast<size_t>(worker) + 1];
    s_chunk.resize(static_cast<size_t>(kChunkElements));
    t_chunk.resize(static_cast<size_t>(kChunkElements));
    for (int64_t chunk = begin; chunk < end; chunk += kChunkElements) {
      const auto size = static_cast<size_t>(std::min(kChunkElements, end - chunk));
      WidenToDouble(source, chunk, std::span<double>(s_chunk.data(), size));
      WidenToDouble(target, chunk, std::span<double>(t_chunk.data(), size));
      InexactPairsOf<double>(reinterpret_cast<const std::byte*>(s_chunk.data()),
                             reinterpret_cast<const std::byte*>(t_chunk.data()), size, pair);
    }
    end_block(worker);
  });
}

// Per filter row (FrontierBuilder::RowOf), the largest |t - s| of its inexact pairs (0: none).
std::vector<double> RowMaxima(const Tensor& source, const Tensor& target, int workers) {
  std::vector<std::vector<double>> maxima(static_cast<size_t>(workers),
                                          std::vector<double>(FrontierBuilder::kRows, 0.0));
  ForEachInexactPair(
      source, target, workers,
      [&](int worker, double abs_source, double abs_error) {
        double& row = maxima[static_cast<size_t>(worker)][FrontierBuilder::RowOf(abs_source)];
        row = std::max(row, abs_error);
      },
      [](int) {});
  for (size_t worker = 1; worker < maxima.size(); ++worker) {
    for (size_t row = 0; row < maxima[0].size(); ++row) {
      maxima[0][row] = std::max(maxima[0][row], maxima[worker][row]);
    }
  }
  return std::move(maxima[0]);
}

// Candidates beyond this many mean the pairs are not few; the frontier is then collected the
// long way rather than holding them.
constexpr size_t kMaxCandidates = size_t{1} << 20;

// The number of undominated inexact pairs (the frontier's depth 1, equal pairs counted once),
// or nullopt when too many pairs are candidates to hold. A row's largest error bounds the rows
// above: only pairs with a larger error than every lower row's can be undominated, and the
// undominated pairs of all pairs are those of these candidates.
std::optional<int64_t> UndominatedCount(const Tensor& source, const Tensor& target,
                                        const std::vector<double>& row_maxima, int workers) {
  std::vector<double> below(row_maxima.size(), 0.0);  // the largest error of the rows below
  for (size_t row = 1; row < below.size(); ++row) {
    below[row] = std::max(below[row - 1], row_maxima[row - 1]);
  }
  std::vector<std::vector<Frontier::Pair>> candidates(static_cast<size_t>(workers));
  std::atomic<size_t> held{0};
  ForEachInexactPair(
      source, target, workers,
      [&](int worker, double abs_source, double abs_error) {
        if (abs_error <= below[FrontierBuilder::RowOf(abs_source)]) return;
        if (held.fetch_add(1, std::memory_order_relaxed) >= kMaxCandidates) return;
        candidates[static_cast<size_t>(worker)].push_back({abs_source, abs_error});
      },
      [](int) {});
  if (held.load() > kMaxCandidates) return std::nullopt;
  std::vector<Frontier::Pair> all;
  for (const std::vector<Frontier::Pair>& part : candidates) {
    all.insert(all.end(), part.begin(), part.end());
  }
  std::sort(all.begin(), all.end(), [](const Frontier::Pair& a, const Frontier::Pair& b) {
    if (a.abs_source != b.abs_source) return a.abs_source < b.abs_source;
    return a.abs_error > b.abs_error;
  });
  // In that order a pair is undominated exactly when its error beats every earlier one's.
  int64_t undominated = 0;
  double highest = 0.0;
  for (const Frontier::Pair& pair : all) {
    if (pair.abs_error > highest) {
      ++undominated;
      highest = pair.abs_error;
    }
  }
  return undominated;
}

}  // namespace

int64_t UndominatedLowerBound(const JointHistogram& joint) {
  // Cells ascend by (source bucket, error bucket): a row's last cell holds its largest error. It
  // is undominated when no earlier row reached its error bucket; the row's other cells are covered
  // by it.
  int64_t count = 0;
  int32_t highest = 0;  // the largest error bucket of the rows before
  const std::vector<JointHistogram::Cell> cells = joint.Sparse();
  for (size_t idx = 0; idx < cells.size(); ++idx) {
    const bool row_ends =
        idx + 1 == cells.size() || cells[idx + 1].source_bucket != cells[idx].source_bucket;
    if (!row_ends) continue;
    const int32_t bucket = cells[idx].error_bucket;
    if (bucket > highest) {
      ++count;
      highest = bucket;
    }
  }
  return count;
}

Frontier CollectFrontier(const Tensor& source, const Tensor& target, const JointHistogram& joint,
                         int64_t compared, int64_t inexact, int workers) {
  // Finish stores nothing when more than kMaxFrontierPoints pairs are undominated. Counting them
  // costs two reads; collecting the skyband when they are many cost 8x the whole comparison.
  if (UndominatedLowerBound(joint) > kMaxFrontierPoints) return Frontier();
  const std::optional<int64_t> undominated =
      UndominatedCount(source, target, RowMaxima(source, target, workers), workers);
  if (undominated && *undominated > kMaxFrontierPoints) return Frontier();
  std::vector<FrontierBuilder> builders(static_cast<size_t>(workers));
  ForEachInexactPair(
      source, target, workers,
      [&](int worker, double abs_source, double abs_error) {
        FrontierBuilder& builder = builders[static_cast<size_t>(worker)];
        if (builder.MayKeep(FrontierBuilder::RowOf(abs_source),
                            static_cast<uint64_t>(ErrorHistogram::BucketOf(abs_error)))) {
          builder.Add(abs_source, abs_error);
        }
      },
      [&](int worker) { builders[static_cast<size_t>(worker)].EndBlock(); });
  for (size_t worker = 1; worker < builders.size(); ++worker) builders[0].Merge(builders[worker]);
  return builders[0].Finish(compared, inexact);
}

}  // namespace convgate::compare::internal
