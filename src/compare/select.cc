#include "compare/select.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <memory>
#include <optional>

#include "compare/accumulator.h"
#include "compare/parallel.h"
#include "compare/simd_kernel.h"
#include "compare/widen.h"

namespace convgate::compare::internal {
namespace {

// Bits a narrowing pass adds to a prefix: 2^16 counters (512 KiB per bucket per worker) split a
// bucket of n values into parts of about n / 65536 for smooth data.
constexpr int kRefineBits = 16;
// Collected keys are staged per worker and copied to the shared scratch this many at a time, so
// workers touch the shared cursors rarely.
constexpr size_t kStagingValues = 256;

// A wanted rank, known to lie among the `count` keys with prefix `key`, at `rank` among them.
struct Query {
  KeyPrefix key;
  int64_t rank;
  int64_t count;
  size_t out;  // index into the result
};

// The keys with one prefix, and what the next pass does with them: collect them all into
// scratch[scratch_begin, + count), or count them by their next bits (down to sub_shift).
struct Group {
  KeyPrefix key;
  int64_t count = 0;
  bool collect = false;
  size_t scratch_begin = 0;
  int sub_shift = 0;
  std::vector<int64_t> sub_counts;  // refine only: merged over workers after the pass
};

bool InGroup(uint64_t key, const KeyPrefix& prefix) {
  return (key >> prefix.shift) == prefix.prefix;
}

// The value of `rank` when the histogram pins it down: zeros, the exact min and max, or a bucket
// whose clamped range holds one value.
std::optional<double> KnownValue(const ErrorHistogram& histogram, int64_t zero_errors,
                                 int32_t bucket, int64_t rank) {
  if (rank < zero_errors) return 0.0;
  if (rank == 0) return histogram.min();
  if (rank == histogram.count() - 1) return histogram.max();
  const double lo = std::max(ErrorHistogram::BucketLower(bucket), histogram.min());
  const double hi = std::min(ErrorHistogram::BucketUpper(bucket), histogram.max());
  if (lo == hi) return lo;
  return std::nullopt;
}

// Queries for the ranks the histogram cannot answer; fills values[] for the ones it can. One walk
// over the non-empty buckets (ranks come in any order; there are at most a few).
std::vector<Query> InitialQueries(const SelectionInput& input, std::span<const int64_t> ranks,
                                  std::vector<double>& values) {
  const ErrorHistogram& histogram = *input.histogram;
  const std::vector<std::pair<int32_t, int64_t>> buckets = histogram.Sparse();
  std::vector<Query> queries;
  for (size_t idx = 0; idx < ranks.size(); ++idx) {
    const int64_t rank = ranks[idx];
    // The bucket holding the rank: the first whose cumulative count passes it.
    int64_t below = 0;
    size_t bucket = 0;
    while (below + buckets[bucket].second <= rank) below += buckets[bucket++].second;
    const std::optional<double> known =
        KnownValue(histogram, input.zero_errors, buckets[bucket].first, rank);
    if (known.has_value()) {
      values[idx] = *known;
      continue;
    }
    const KeyPrefix key{static_cast<uint64_t>(buckets[bucket].first), 52 - kHistogramSubBits};
    queries.push_back(Query{key, rank - below, buckets[bucket].second, idx});
  }
  return queries;
}

// One group per distinct prefix; the smallest are collected while they fit in the scratch, the
// rest narrowed. Sets each query's group through `query_group`.
std::vector<Group> PlanGroups(std::span<const Query> queries, int64_t scratch_values,
                              std::vector<size_t>& query_group) {
  std::vector<Group> groups;
  query_group.clear();
  for (const Query& query : queries) {
    auto found = std::find_if(groups.begin(), groups.end(), [&](const Group& group) {
      return group.key.prefix == query.key.prefix && group.key.shift == query.key.shift;
    });
    if (found == groups.end()) {
      Group group;
      group.key = query.key;
      group.count = query.count;
      groups.push_back(std::move(group));
      found = groups.end() - 1;
    }
    query_group.push_back(static_cast<size_t>(found - groups.begin()));
  }
  std::vector<size_t> by_size(groups.size());
  for (size_t idx = 0; idx < by_size.size(); ++idx) by_size[idx] = idx;
  std::sort(by_size.begin(), by_size.end(),
            [&](size_t a, size_t b) { return groups[a].count < groups[b].count; });
  int64_t collected = 0;
  for (size_t idx : by_size) {
    Group& group = groups[idx];
    group.collect = collected + group.count <= scratch_values;
    if (group.collect) {
      group.scratch_begin = static_cast<size_t>(collected);
      collected += group.count;
    } else {
      group.sub_shift = std::max(group.key.shift - kRefineBits, 0);
    }
  }
  return groups;
}

// One pass over the tensors for a set of groups.
class Pass {
 public:
  Pass(const SelectionInput& input, std::vector<Group>& groups, std::span<uint64_t> scratch)
      : input_(input),
        groups_(groups),
        scratch_(scratch),
        cursors_(groups.size()),
        layout_(LayoutOf(*input.source, *input.target)) {
    for (const Group& group : groups_) prefixes_.push_back(group.key);
    std::sort(prefixes_.begin(), prefixes_.end(),
              [](const KeyPrefix& a, const KeyPrefix& b) { return a.shift < b.shift; });
  }

  void Run() {
    const int64_t count = input_.source->num_elements();
    const int64_t blocks = (count + kBlockElements - 1) / kBlockElements;
    std::vector<Worker> workers(static_cast<size_t>(input_.workers));
    for (Worker& worker : workers) worker.Init(groups_);
    ForEachBlock(blocks, input_.workers, [&](int worker, int64_t block) {
      ScanBlock(workers[static_cast<size_t>(worker)], block * kBlockElements,
                std::min(count, (block + 1) * kBlockElements));
    });
    for (Worker& worker : workers) {
      for (size_t group = 0; group < groups_.size(); ++group) Flush(worker, group);
    }
    MergeSubCounts(workers);
  }

 private:
  struct Worker {
    std::vector<std::vector<uint64_t>> staging;    // collect groups
    std::vector<std::vector<int64_t>> sub_counts;  // refine groups
    LazyChunk<double> source;
    LazyChunk<double> target;
    LazyChunk<uint64_t> source_bits;
    LazyChunk<uint64_t> target_bits;
    std::vector<float> source_f32;  // float32 runs that are not aligned (Float32Run)
    std::vector<float> target_f32;
    std::vector<uint64_t> keys = std::vector<uint64_t>(kChunkElements);

    void Init(const std::vector<Group>& groups) {
      staging.resize(groups.size());
      sub_counts.resize(groups.size());
      for (size_t idx = 0; idx < groups.size(); ++idx) {
        if (groups[idx].collect) {
          staging[idx].reserve(kStagingValues);
        } else {
          sub_counts[idx].assign(size_t{1} << (groups[idx].key.shift - groups[idx].sub_shift), 0);
        }
      }
    }
  };

  void ScanBlock(Worker& worker, int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; chunk += kChunkElements) {
      const auto size = static_cast<size_t>(std::min(kChunkElements, end - chunk));
      const size_t found =
          input_.exact ? ExactKeys(worker, chunk, size) : FloatKeys(worker, chunk, size);
      for (size_t idx = 0; idx < found; ++idx) Dispatch(worker, worker.keys[idx]);
    }
  }

  size_t FloatKeys(Worker& worker, int64_t begin, size_t size) {
    const auto offset = static_cast<size_t>(begin);
    switch (layout_) {
      case PairLayout::kFloat32:
        return CollectErrorKeys(Float32Run(*input_.source, begin, size, worker.source_f32),
                                Float32Run(*input_.target, begin, size, worker.target_f32),
                                prefixes_, input_.all_finite, worker.keys);
      case PairLayout::kFloat64:
        return CollectErrorKeys(input_.source->data<double>().subspan(offset, size),
                                input_.target->data<double>().subspan(offset, size), prefixes_,
                                input_.all_finite, worker.keys);
      case PairLayout::kWidened:
        break;
    }
    const std::span<double> source = worker.source.First(size);
    const std::span<double> target = worker.target.First(size);
    WidenToDouble(*input_.source, begin, source);
    WidenToDouble(*input_.target, begin, target);
    return CollectErrorKeys(std::span<const double>(source), std::span<const double>(target),
                            prefixes_, input_.all_finite, worker.keys);
  }

  size_t ExactKeys(Worker& worker, int64_t begin, size_t size) {
    const std::span<uint64_t> source = worker.source_bits.First(size);
    const std::span<uint64_t> target = worker.target_bits.First(size);
    WidenToBits(*input_.source, begin, source);
    WidenToBits(*input_.target, begin, target);
    const bool source_signed = BitsAreSigned(input_.source->dtype());
    const bool target_signed = BitsAreSigned(input_.target->dtype());
    size_t found = 0;
    for (size_t idx = 0; idx < size; ++idx) {
      const uint64_t key = std::bit_cast<uint64_t>(
          IntAbsDiff(source[idx], source_signed, target[idx], target_signed));
      const bool wanted =
          std::any_of(prefixes_.begin(), prefixes_.end(),
                      [&](const KeyPrefix& prefix) { return InGroup(key, prefix); });
      if (wanted) worker.keys[found++] = key;
    }
    return found;
  }

  void Dispatch(Worker& worker, uint64_t key) {
    size_t group = 0;
    while (!InGroup(key, groups_[group].key)) ++group;  // CollectErrorKeys matched one
    if (!groups_[group].collect) {
      const uint64_t mask = worker.sub_counts[group].size() - 1;
      ++worker.sub_counts[group][(key >> groups_[group].sub_shift) & mask];
      return;
    }
    worker.staging[group].push_back(key);
    if (worker.staging[group].size() == kStagingValues) Flush(worker, group);
  }

  void Flush(Worker& worker, size_t group) {
    std::vector<uint64_t>& staged = worker.staging[group];
    if (staged.empty()) return;
    const size_t at = cursors_[group].fetch_add(staged.size());
    assert(at + staged.size() <= static_cast<size_t>(groups_[group].count));
    std::copy(staged.begin(), staged.end(),
              scratch_.begin() + static_cast<ptrdiff_t>(groups_[group].scratch_begin + at));
    staged.clear();
  }

  void MergeSubCounts(std::vector<Worker>& workers) {
    for (size_t group = 0; group < groups_.size(); ++group) {
      if (groups_[group].collect) continue;
      groups_[group].sub_counts = std::move(workers[0].sub_counts[group]);
      for (size_t worker = 1; worker < workers.size(); ++worker) {
        const std::vector<int64_t>& counts = workers[worker].sub_counts[group];
        for (size_t idx = 0; idx < counts.size(); ++idx)
          groups_[group].sub_counts[idx] += counts[idx];
      }
    }
  }

  const SelectionInput& input_;
  std::vector<Group>& groups_;
  std::span<uint64_t> scratch_;
  std::vector<std::atomic<size_t>> cursors_;
  std::vector<KeyPrefix> prefixes_;
  const PairLayout layout_;
};

// The collected queries of one group, by nth_element over its slice of the scratch; ranks in
// ascending order, each selection only partitioning what lies above the previous one.
void ResolveCollected(const Group& group, std::vector<std::pair<int64_t, size_t>> rank_outs,
                      std::span<uint64_t> scratch, std::vector<double>& values) {
  std::sort(rank_outs.begin(), rank_outs.end());
  const auto begin = scratch.begin() + static_cast<ptrdiff_t>(group.scratch_begin);
  const auto end = begin + group.count;
  auto settled = begin;
  for (const auto& [rank, out] : rank_outs) {
    const auto nth = begin + rank;
    if (nth >= settled) {
      std::nth_element(settled, nth, end);
      settled = nth + 1;
    }
    values[out] = std::bit_cast<double>(*nth);
  }
}

// A narrowed query: the sub-bucket holding its rank becomes its new prefix.
Query Narrow(const Query& query, const Group& group) {
  int64_t below = 0;
  size_t sub = 0;
  while (below + group.sub_counts[sub] <= query.rank) below += group.sub_counts[sub++];
  const int bits = group.key.shift - group.sub_shift;
  const KeyPrefix key{(group.key.prefix << bits) | sub, group.sub_shift};
  return Query{key, query.rank - below, group.sub_counts[sub], query.out};
}

}  // namespace

std::vector<double> SelectErrorRanks(const SelectionInput& input, std::span<const int64_t> ranks) {
  std::vector<double> values(ranks.size(), 0.0);
  std::vector<Query> queries = InitialQueries(input, ranks, values);
  std::vector<size_t> query_group;
  while (!queries.empty()) {
    std::vector<Group> groups = PlanGroups(queries, input.scratch_values, query_group);
    int64_t collected = 0;
    for (const Group& group : groups) collected += group.collect ? group.count : 0;
    // Left uninitialized: the pass writes every slot (counts are exact), so zeroing up to
    // 64 MiB first would only cost time.
    const auto scratch_size = static_cast<size_t>(collected);
    const std::unique_ptr<uint64_t[]> scratch_memory(new uint64_t[scratch_size]);
    const std::span<uint64_t> scratch(scratch_memory.get(), scratch_size);
    Pass(input, groups, scratch).Run();
    std::vector<Query> next;
    for (size_t group_idx = 0; group_idx < groups.size(); ++group_idx) {
      const Group& group = groups[group_idx];
      std::vector<std::pair<int64_t, size_t>> rank_outs;
      for (size_t idx = 0; idx < queries.size(); ++idx) {
        if (query_group[idx] != group_idx) continue;
        if (group.collect) {
          rank_outs.emplace_back(queries[idx].rank, queries[idx].out);
          continue;
        }
        const Query narrowed = Narrow(queries[idx], group);
        if (narrowed.key.shift == 0) {
          values[narrowed.out] = std::bit_cast<double>(narrowed.key.prefix);
        } else {
          next.push_back(narrowed);
        }
      }
      if (group.collect) ResolveCollected(group, std::move(rank_outs), scratch, values);
    }
    queries = std::move(next);
  }
  return values;
}

}  // namespace convgate::compare::internal
