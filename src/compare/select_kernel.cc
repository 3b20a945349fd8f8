// Highway's dynamic dispatch compiles this file once per target (foreach_target.h re-includes it):
// the scan of the percentile selection's narrowing passes (select.h), apart from simd_kernel.cc so
// each file stays one concept.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compare/select_kernel.cc"
// Before everything else: foreach_target.h re-includes this file once per SIMD target.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>

#include "compare/simd_kernel.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

#ifndef CONVGATE_COMPARE_SELECT_KERNEL_ONCE
#define CONVGATE_COMPARE_SELECT_KERNEL_ONCE
namespace convgate::compare::internal {

// For each mask of up to 8 lanes: the indices of its set lanes, lowest first, then zeros (any
// valid index: those lanes are overwritten or past the count).
struct CompressOrder {
  alignas(64) int64_t lanes[256][8];
};
constexpr CompressOrder MakeCompressOrder() {
  CompressOrder order{};
  for (int mask = 0; mask < 256; ++mask) {
    int next = 0;
    for (int lane = 0; lane < 8; ++lane) {
      if ((mask >> lane) & 1) order.lanes[mask][next++] = lane;
    }
  }
  return order;
}
inline constexpr CompressOrder kCompressOrder = MakeCompressOrder();

}  // namespace convgate::compare::internal
#endif  // CONVGATE_COMPARE_SELECT_KERNEL_ONCE

HWY_BEFORE_NAMESPACE();
namespace convgate::compare::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<double>;
using DU = hn::RebindToUnsigned<D>;
using V = hn::Vec<D>;

// Elements ahead to prefetch (2 KiB of float32 per stream): measured here, the hardware
// prefetchers alone left this scan at 1.4 ns per element from DRAM; with these hints 0.8.
constexpr size_t kPrefetchDistance = 512;

// A vector of doubles from float32 or float64 input (float32 widens exactly in registers).
HWY_INLINE V LoadDouble(D d, const double* HWY_RESTRICT values) { return hn::LoadU(d, values); }
HWY_INLINE V LoadDouble(D d, const float* HWY_RESTRICT values) {
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), values));
}

// The mask as an integer, lane i in bit i.
template <class M>
HWY_INLINE uint64_t MaskBits(M mask) {
  const DU du;
  uint8_t bytes[(hn::MaxLanes(du) + 7) / 8] = {};
  hn::StoreMaskBits(du, mask, bytes);
  uint64_t bits = 0;
  for (size_t idx = 0; idx < std::size(bytes); ++idx) bits |= uint64_t{bytes[idx]} << (8 * idx);
  return bits;
}

// Appends the lanes of `keys` selected by `wanted` to out[written...]; returns the new count.
// Branch-free (a quarter of the vectors have a selected lane, at random): permute the selected
// lanes to the front and store the whole vector, which never writes past the elements read since
// written <= the offset of this vector. Highway 1.0.3's own Compress of 64-bit lanes copies a
// 2 KiB table per call, and AVX-512's compress-to-memory form is microcoded on AMD Zen 4.
template <class M>
HWY_INLINE size_t AppendSelected(hn::Vec<DU> keys, M wanted, uint64_t* HWY_RESTRICT out,
                                 size_t written) {
  const DU du;
  const uint64_t bits = MaskBits(wanted);
  const auto order = hn::SetTableIndices(du, kCompressOrder.lanes[bits]);
  hn::StoreU(hn::TableLookupLanes(keys, order), du, out + written);
  return written + static_cast<size_t>(hwy::PopCount(bits));
}

// Prefix tests against up to kCount prefixes of one shift, unrolled: the prefix vectors stay in
// registers. Padding repeats the last prefix, which matches nothing new.
template <size_t kCount>
struct PrefixSet {
  hn::Vec<DU> prefixes[kCount];
  int shift;

  PrefixSet(const KeyPrefix* keys, size_t num_keys) : shift(keys[0].shift) {
    for (size_t idx = 0; idx < kCount; ++idx) {
      prefixes[idx] = hn::Set(DU(), keys[std::min(idx, num_keys - 1)].prefix);
    }
  }
  HWY_INLINE auto Match(hn::Vec<DU> keys) const {
    const auto shifted = hn::ShiftRightSame(keys, shift);
    auto match = hn::Eq(shifted, prefixes[0]);
    HWY_UNROLL(16)
    for (size_t idx = 1; idx < kCount; ++idx) match = hn::Or(match, hn::Eq(shifted, prefixes[idx]));
    return match;
  }
};

// The general case (prefixes of several shifts, after a narrowing pass): one test at a time.
struct PrefixList {
  const KeyPrefix* keys;
  size_t num_keys;

  HWY_INLINE auto Match(hn::Vec<DU> keys_vector) const {
    const DU du;
    auto match =
        hn::Eq(hn::ShiftRightSame(keys_vector, keys[0].shift), hn::Set(du, keys[0].prefix));
    for (size_t idx = 1; idx < num_keys; ++idx) {
      match = hn::Or(match, hn::Eq(hn::ShiftRightSame(keys_vector, keys[idx].shift),
                                   hn::Set(du, keys[idx].prefix)));
    }
    return match;
  }
};

// See CollectErrorKeys. Covers the whole vectors of the chunk and says how many elements that
// was in `vectorized`. The finiteness test is skipped when the caller knows every value is finite.
template <typename T, class Prefixes>
size_t CollectKeys(const T* HWY_RESTRICT source, const T* HWY_RESTRICT target, size_t count,
                   const Prefixes& prefixes, bool all_finite, uint64_t* HWY_RESTRICT out,
                   size_t& vectorized) {
  const D d;
  const DU du;
  const size_t lanes_per_vector = hn::Lanes(d);
  size_t written = 0;
  size_t offset = 0;
  for (; offset + lanes_per_vector <= count; offset += lanes_per_vector) {
    if (offset + kPrefetchDistance < count) {
      hwy::Prefetch(source + offset + kPrefetchDistance);
      hwy::Prefetch(target + offset + kPrefetchDistance);
    }
    const V s = LoadDouble(d, source + offset);
    const V t = LoadDouble(d, target + offset);
    const auto keys = hn::BitCast(du, hn::Abs(hn::Sub(t, s)));
    auto wanted = prefixes.Match(keys);
    if (!all_finite) {
      wanted = hn::And(wanted, hn::RebindMask(du, hn::And(hn::IsFinite(s), hn::IsFinite(t))));
    }
    written = AppendSelected(keys, wanted, out, written);
  }
  vectorized = offset;
  return written;
}

// Picks the prefix test: unrolled for the usual one-shift sets (up to 2 per kPercentiles entry),
// rounded up to an even count to keep the number of instantiations small.
template <typename T>
size_t CollectKeysAnyPrefixes(const T* HWY_RESTRICT source, const T* HWY_RESTRICT target,
                              size_t count, const KeyPrefix* prefixes, size_t num_prefixes,
                              bool all_finite, uint64_t* HWY_RESTRICT out, size_t& vectorized) {
  const auto run = [&](const auto& prefix_test) {
    return CollectKeys(source, target, count, prefix_test, all_finite, out, vectorized);
  };
  const bool one_shift = prefixes[0].shift == prefixes[num_prefixes - 1].shift;  // sorted
  if (!one_shift || num_prefixes > 10) return run(PrefixList{prefixes, num_prefixes});
  if (num_prefixes <= 2) return run(PrefixSet<2>(prefixes, num_prefixes));
  if (num_prefixes <= 4) return run(PrefixSet<4>(prefixes, num_prefixes));
  if (num_prefixes <= 6) return run(PrefixSet<6>(prefixes, num_prefixes));
  if (num_prefixes <= 8) return run(PrefixSet<8>(prefixes, num_prefixes));
  return run(PrefixSet<10>(prefixes, num_prefixes));
}

size_t CollectFloatKeys(const float* HWY_RESTRICT source, const float* HWY_RESTRICT target,
                        size_t count, const KeyPrefix* prefixes, size_t num_prefixes,
                        bool all_finite, uint64_t* HWY_RESTRICT out, size_t& vectorized) {
  return CollectKeysAnyPrefixes(source, target, count, prefixes, num_prefixes, all_finite, out,
                                vectorized);
}

size_t CollectDoubleKeys(const double* HWY_RESTRICT source, const double* HWY_RESTRICT target,
                         size_t count, const KeyPrefix* prefixes, size_t num_prefixes,
                         bool all_finite, uint64_t* HWY_RESTRICT out, size_t& vectorized) {
  return CollectKeysAnyPrefixes(source, target, count, prefixes, num_prefixes, all_finite, out,
                                vectorized);
}

}  // namespace HWY_NAMESPACE
}  // namespace convgate::compare::internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace convgate::compare::internal {

HWY_EXPORT(CollectFloatKeys);
HWY_EXPORT(CollectDoubleKeys);

namespace {

// The elements after the last whole vector, one by one.
template <typename T>
size_t CollectTail(std::span<const T> source, std::span<const T> target,
                   std::span<const KeyPrefix> prefixes, uint64_t* out) {
  size_t written = 0;
  for (size_t idx = 0; idx < source.size(); ++idx) {
    const double s = source[idx];
    const double t = target[idx];
    if (!std::isfinite(s) || !std::isfinite(t)) continue;
    const uint64_t key = std::bit_cast<uint64_t>(std::abs(t - s));
    for (const KeyPrefix& prefix : prefixes) {
      if ((key >> prefix.shift) != prefix.prefix) continue;
      out[written++] = key;
      break;
    }
  }
  return written;
}

template <typename T, typename Kernel>
size_t CollectChunk(Kernel kernel, std::span<const T> source, std::span<const T> target,
                    std::span<const KeyPrefix> prefixes, bool all_finite, std::span<uint64_t> out) {
  size_t vectorized = 0;
  const size_t written = kernel(source.data(), target.data(), source.size(), prefixes.data(),
                                prefixes.size(), all_finite, out.data(), vectorized);
  return written + CollectTail(source.subspan(vectorized), target.subspan(vectorized), prefixes,
                               out.data() + written);
}

}  // namespace

size_t CollectErrorKeys(std::span<const float> source, std::span<const float> target,
                        std::span<const KeyPrefix> prefixes, bool all_finite,
                        std::span<uint64_t> out) {
  return CollectChunk(HWY_DYNAMIC_DISPATCH(CollectFloatKeys), source, target, prefixes, all_finite,
                      out);
}

size_t CollectErrorKeys(std::span<const double> source, std::span<const double> target,
                        std::span<const KeyPrefix> prefixes, bool all_finite,
                        std::span<uint64_t> out) {
  return CollectChunk(HWY_DYNAMIC_DISPATCH(CollectDoubleKeys), source, target, prefixes, all_finite,
                      out);
}

}  // namespace convgate::compare::internal
#endif  // HWY_ONCE
