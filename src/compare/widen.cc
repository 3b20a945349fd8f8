#include "compare/widen.h"

#include <cstddef>
#include <cstring>

#include "convgate/core/float16.h"

namespace convgate::compare::internal {
namespace {

// Elements are read with memcpy, which compiles to plain loads: the tensor's memory need not be
// aligned for T (Tensor::IsAligned).
template <typename T, typename Out, typename Convert>
void WidenWith(const Tensor& tensor, int64_t begin, std::span<Out> out, Convert convert) {
  const std::byte* data = tensor.bytes().data() + static_cast<size_t>(begin) * sizeof(T);
  for (size_t idx = 0; idx < out.size(); ++idx) {
    T value;
    std::memcpy(&value, data + idx * sizeof(T), sizeof(T));
    out[idx] = convert(value);
  }
}

template <typename T, typename Out>
void WidenCast(const Tensor& tensor, int64_t begin, std::span<Out> out) {
  WidenWith<T>(tensor, begin, out, [](T value) { return static_cast<Out>(value); });
}

// Signed integers go through int64_t first so negative values are sign-extended to 64 bits.
template <typename T>
void WidenSignedBits(const Tensor& tensor, int64_t begin, std::span<uint64_t> out) {
  WidenWith<T>(tensor, begin, out,
               [](T value) { return static_cast<uint64_t>(static_cast<int64_t>(value)); });
}

}  // namespace

void WidenToDouble(const Tensor& tensor, int64_t begin, std::span<double> out) {
  switch (tensor.dtype()) {
    case DType::kFloat32:
      return WidenCast<float>(tensor, begin, out);
    case DType::kFloat64:
      return WidenCast<double>(tensor, begin, out);
    case DType::kFloat16:
      return WidenWith<uint16_t>(tensor, begin, out,
                                 [](uint16_t bits) { return double{HalfToFloat(bits)}; });
    case DType::kBFloat16:
      return WidenWith<uint16_t>(tensor, begin, out,
                                 [](uint16_t bits) { return double{BFloat16ToFloat(bits)}; });
    case DType::kInt8:
      return WidenCast<int8_t>(tensor, begin, out);
    case DType::kInt16:
      return WidenCast<int16_t>(tensor, begin, out);
    case DType::kInt32:
      return WidenCast<int32_t>(tensor, begin, out);
    case DType::kInt64:
      return WidenCast<int64_t>(tensor, begin, out);
    case DType::kUInt8:
      return WidenCast<uint8_t>(tensor, begin, out);
    case DType::kUInt16:
      return WidenCast<uint16_t>(tensor, begin, out);
    case DType::kUInt32:
      return WidenCast<uint32_t>(tensor, begin, out);
    case DType::kUInt64:
      return WidenCast<uint64_t>(tensor, begin, out);
    case DType::kBool:
      // Any non-zero byte is true, as Tensor::GetDouble reads it.
      return WidenWith<uint8_t>(tensor, begin, out,
                                [](uint8_t value) { return value != 0 ? 1.0 : 0.0; });
    case DType::kString:
      break;  // excluded by the REQUIRES clause
  }
}

void WidenToBits(const Tensor& tensor, int64_t begin, std::span<uint64_t> out) {
  switch (tensor.dtype()) {
    case DType::kInt8:
      return WidenSignedBits<int8_t>(tensor, begin, out);
    case DType::kInt16:
      return WidenSignedBits<int16_t>(tensor, begin, out);
    case DType::kInt32:
      return WidenSignedBits<int32_t>(tensor, begin, out);
    case DType::kInt64:
      return WidenSignedBits<int64_t>(tensor, begin, out);
    case DType::kUInt8:
      return WidenCast<uint8_t>(tensor, begin, out);
    case DType::kUInt16:
      return WidenCast<uint16_t>(tensor, begin, out);
    case DType::kUInt32:
      return WidenCast<uint32_t>(tensor, begin, out);
    case DType::kUInt64:
      return WidenCast<uint64_t>(tensor, begin, out);
    case DType::kBool:
      return WidenWith<uint8_t>(tensor, begin, out,
                                [](uint8_t value) { return uint64_t{value != 0 ? 1u : 0u}; });
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kString:
      break;  // excluded by the REQUIRES clause
  }
}

bool BitsAreSigned(DType dtype) { return IsInteger(dtype) && IsSigned(dtype); }

PairLayout LayoutOf(const Tensor& source, const Tensor& target) {
  if (source.dtype() != target.dtype()) return PairLayout::kWidened;
  if (source.dtype() == DType::kFloat32) return PairLayout::kFloat32;
  // Widening a double is a copy: what a misaligned float64 run would need anyway.
  const bool aligned = source.IsAligned() && target.IsAligned();
  if (source.dtype() == DType::kFloat64 && aligned) return PairLayout::kFloat64;
  return PairLayout::kWidened;
}

std::span<const float> Float32Run(const Tensor& tensor, int64_t begin, size_t size,
                                  std::vector<float>& scratch) {
  if (tensor.IsAligned()) return tensor.data<float>().subspan(static_cast<size_t>(begin), size);
  if (scratch.size() < size) scratch.resize(size);
  std::memcpy(scratch.data(), tensor.bytes().data() + static_cast<size_t>(begin) * sizeof(float),
              size * sizeof(float));
  return {scratch.data(), size};
}

}  // namespace convgate::compare::internal
