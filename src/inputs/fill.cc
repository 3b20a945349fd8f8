#include "inputs/fill.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "convgate/core/numbers.h"

namespace convgate::inputs {
namespace {

struct IntRange {
  int64_t lo;
  int64_t hi;
};

// The dtype's limits as int64. uint64 is capped at INT64_MAX: UniformInt draws int64, and values
// above 2^63 are not a sensible mock input for any model.
IntRange IntegerLimits(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return {INT8_MIN, INT8_MAX};
    case DType::kInt16:
      return {INT16_MIN, INT16_MAX};
    case DType::kInt32:
      return {INT32_MIN, INT32_MAX};
    case DType::kUInt8:
      return {0, UINT8_MAX};
    case DType::kUInt16:
      return {0, UINT16_MAX};
    case DType::kUInt32:
      return {0, UINT32_MAX};
    case DType::kUInt64:
      return {0, INT64_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

// Saturating double -> int64. 2^63 is exactly representable as a double; INT64_MAX is not, so
// the comparison must be against 2^63 rather than a cast of INT64_MAX.
int64_t SaturateToInt64(double value) {
  if (std::isnan(value)) return 0;
  if (value <= -0x1p63) return std::numeric_limits<int64_t>::min();
  if (value >= 0x1p63) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(value);
}

// [ceil(lo), floor(hi)] ("[lo,hi)": the last integer below hi) clamped to the dtype; lo > hi when
// no integer qualifies.
IntRange IntegerRange(DType dtype, const ValueRange& range) {
  const IntRange limits = IntegerLimits(dtype);
  const double hi = range.hi_exclusive ? std::ceil(range.hi) - 1.0 : std::floor(range.hi);
  return {std::max(SaturateToInt64(std::ceil(range.lo)), limits.lo),
          std::min(SaturateToInt64(hi), limits.hi)};
}

// Calls fn(tensor.data<T>()) with T the integer dtype's C++ type.
template <typename Fn>
void VisitIntegers(Tensor& tensor, Fn fn) {
  switch (tensor.dtype()) {
    case DType::kInt8:
      return fn(tensor.data<int8_t>());
    case DType::kInt16:
      return fn(tensor.data<int16_t>());
    case DType::kInt32:
      return fn(tensor.data<int32_t>());
    case DType::kInt64:
      return fn(tensor.data<int64_t>());
    case DType::kUInt8:
      return fn(tensor.data<uint8_t>());
    case DType::kUInt16:
      return fn(tensor.data<uint16_t>());
    case DType::kUInt32:
      return fn(tensor.data<uint32_t>());
    case DType::kUInt64:
      return fn(tensor.data<uint64_t>());
    default:
      return;
  }
}

void FillIntegers(Tensor& tensor, Fill fill, const ValueRange& range, Prng& prng) {
  if (fill == Fill::kUniform) {
    const IntRange bounds = IntegerRange(tensor.dtype(), range);
    VisitIntegers(tensor, [&](auto values) {
      using T = typename decltype(values)::value_type;
      for (T& value : values) value = static_cast<T>(prng.UniformInt(bounds.lo, bounds.hi));
    });
    return;
  }
  // Normal: round half away from zero (std::round, the same on every platform), then saturate.
  const IntRange limits = IntegerLimits(tensor.dtype());
  const double mean = range.lo / 2 + range.hi / 2;
  const double stddev = range.hi / 2 - range.lo / 2;
  VisitIntegers(tensor, [&](auto values) {
    using T = typename decltype(values)::value_type;
    for (T& value : values) {
      const int64_t drawn = SaturateToInt64(std::round(mean + stddev * prng.Normal()));
      value = static_cast<T>(std::clamp(drawn, limits.lo, limits.hi));
    }
  });
}

// Halves avoid overflow when lo and hi are near +-DBL_MAX.
void FillFloats(Tensor& tensor, Fill fill, const ValueRange& range, Prng& prng) {
  const int64_t count = tensor.num_elements();
  if (fill == Fill::kUniform && tensor.dtype() == DType::kFloat32 && tensor.IsAligned()) {
    // The common case written straight (the values SetDouble would store): a streamed run makes
    // each sample again for the target.
    const std::span<float> values = tensor.data<float>();
    prng.FillUniform(values.data(), static_cast<int64_t>(values.size()), range.lo, range.hi);
    return;
  }
  if (fill == Fill::kUniform) {
    for (int64_t flat = 0; flat < count; ++flat) {
      tensor.SetDouble(flat, prng.Uniform(range.lo, range.hi));
    }
    return;
  }
  const double mean = range.lo / 2 + range.hi / 2;
  const double stddev = range.hi / 2 - range.lo / 2;
  for (int64_t flat = 0; flat < count; ++flat) {
    tensor.SetDouble(flat, mean + stddev * prng.Normal());
  }
}

}  // namespace

ValueRange DefaultValueRange(DType dtype, Fill fill) {
  if (IsFloating(dtype) && fill == Fill::kNormal) return ValueRange{-1.0, 1.0};
  return ValueRange{0.0, 1.0};
}

Status CheckFillRange(DType dtype, Fill fill, const ValueRange& range) {
  if (!IsInteger(dtype) || fill != Fill::kUniform) return Status::OK();
  const IntRange bounds = IntegerRange(dtype, range);
  if (bounds.lo <= bounds.hi) return Status::OK();
  return Status::InvalidArgument("value range [" + FormatShortest(range.lo) + ", " +
                                 FormatShortest(range.hi) + "] holds no " +
                                 std::string(DTypeName(dtype)) + " value");
}

void FillTensor(Tensor& tensor, Fill fill, const ValueRange& range, Prng& prng) {
  const int64_t count = tensor.num_elements();
  if (fill == Fill::kZeros || fill == Fill::kOnes) {
    const double value = fill == Fill::kZeros ? 0.0 : 1.0;
    for (int64_t flat = 0; flat < count; ++flat) tensor.SetDouble(flat, value);
    return;
  }
  if (tensor.dtype() == DType::kBool) {
    // The top bit: xoshiro256**'s high bits are its strongest.
    for (uint8_t& value : tensor.data<uint8_t>())
      value = static_cast<uint8_t>(prng.NextU64() >> 63);
    return;
  }
  if (IsInteger(tensor.dtype())) return FillIntegers(tensor, fill, range, prng);
  FillFloats(tensor, fill, range, prng);
}

}  // namespace convgate::inputs
