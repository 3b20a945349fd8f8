#include "compare/widen.h"

#include <cstddef>

#include "convgate/core/float16.h"

namespace convgate::compare::internal {
namespace {

template <typename T, typename Out, typename Convert>
void WidenWith(const Tensor& tensor, int64_t begin, std::span<Out> out, Convert convert) {
  std::span<const T> data =
      tensor.data<T>().subspan(static_cast<size_t>(begin), static_cast<size_t>(out.size()));
  for (size_t idx = 0; idx < out.size(); ++idx) out[idx] = convert(data[idx]);
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
  if (source.dtype() == DType::kFloat64) return PairLayout::kFloat64;
  return PairLayout::kWidened;
}

}  // namespace convgate::compare::internal
