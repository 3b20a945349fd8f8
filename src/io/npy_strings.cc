#include "io/npy_strings.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>

#include "convgate/core/utf8.h"

namespace convgate::io::internal {
namespace {

char32_t LoadCodeUnit(std::string_view element, size_t idx, bool big_endian) {
  char32_t value = 0;
  for (size_t byte_idx = 0; byte_idx < 4; ++byte_idx) {
    const auto byte = static_cast<unsigned char>(element[4 * idx + byte_idx]);
    const size_t shift = 8 * (big_endian ? 3 - byte_idx : byte_idx);
    value |= static_cast<char32_t>(byte) << shift;
  }
  return value;
}

void StoreCodeUnit(char32_t value, char* out) {
  for (size_t byte_idx = 0; byte_idx < 4; ++byte_idx) {
    out[byte_idx] = static_cast<char>((value >> (8 * byte_idx)) & 0xFF);
  }
}

std::string Hex(uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "0x%X", value);
  return buffer;
}

Status DecodeUnicodeElement(std::string_view element, size_t width, bool big_endian,
                            std::string& out) {
  size_t length = width;
  while (length > 0 && LoadCodeUnit(element, length - 1, big_endian) == 0) --length;
  for (size_t idx = 0; idx < length; ++idx) {
    const char32_t code_point = LoadCodeUnit(element, idx, big_endian);
    if (!IsUnicodeScalar(code_point)) {
      return Status::DataLoss("character " + std::to_string(idx) + " is " +
                              Hex(static_cast<uint32_t>(code_point)) +
                              ", not a Unicode character (a surrogate or above U+10FFFF)");
    }
    AppendUtf8(code_point, out);
  }
  return Status::OK();
}

// Code points in `text`; the first invalid byte's offset as an error.
Result<size_t> CountCodePoints(std::string_view text) {
  size_t count = 0;
  for (size_t pos = 0; pos < text.size(); ++count) {
    const std::optional<Utf8Char> next = DecodeUtf8(text, pos);
    if (!next) {
      char byte[8];
      std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(text[pos]));
      return Status::InvalidArgument("not valid UTF-8 (byte " + std::string(byte) + " at offset " +
                                     std::to_string(pos) +
                                     "), which a numpy str array cannot hold");
    }
    pos += next->length;
  }
  return count;
}

void EncodeElement(std::string_view text, char* out) {
  for (size_t pos = 0; pos < text.size(); out += 4) {
    const Utf8Char next = *DecodeUtf8(text, pos);  // validated by CountCodePoints
    StoreCodeUnit(next.code_point, out);
    pos += next.length;
  }
}

std::string ElementName(const Shape& shape, size_t flat) {
  return "element " + FormatIndex(shape.Unravel(static_cast<int64_t>(flat)));
}

Status EncodeAllocationFailure(size_t bytes, const Tensor& tensor) {
  return Status::Unavailable("cannot allocate " + std::to_string(bytes) + " bytes to encode " +
                             tensor.Describe() + " for numpy");
}

}  // namespace

size_t NpyStringElementBytes(NpyStringKind kind, size_t width) {
  return kind == NpyStringKind::kUnicode ? 4 * width : width;
}

Result<Tensor> DecodeNpyStrings(std::string_view data, const Shape& shape, NpyStringKind kind,
                                size_t width, bool big_endian) {
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(DType::kString, shape));
  const size_t element_bytes = NpyStringElementBytes(kind, width);
  std::span<std::string> out = tensor.strings();
  for (size_t flat = 0; flat < out.size(); ++flat) {
    const std::string_view element = data.substr(flat * element_bytes, element_bytes);
    if (kind == NpyStringKind::kBytes) {
      out[flat] = element.substr(0, element.find_last_not_of('\0') + 1);
      continue;
    }
    Status decoded = DecodeUnicodeElement(element, width, big_endian, out[flat]);
    if (!decoded.ok()) return decoded.WithContext(ElementName(shape, flat));
  }
  return tensor;
}

Result<EncodedNpyStrings> EncodeNpyUnicode(const Tensor& tensor) {
  const std::span<const std::string> strings = tensor.strings();
  EncodedNpyStrings encoded;
  for (size_t flat = 0; flat < strings.size(); ++flat) {
    Result<size_t> count = CountCodePoints(strings[flat]);
    if (!count.ok()) return count.status().WithContext(ElementName(tensor.shape(), flat));
    encoded.width = std::max(encoded.width, *count);
  }
  // The padded copy can dwarf the strings (one long element widens them all), as it does in numpy.
  const size_t element_bytes = 4 * encoded.width;
  if (!strings.empty() && element_bytes > SIZE_MAX / strings.size()) {
    return Status::Unavailable("cannot encode " + tensor.Describe() +
                               " for numpy: " + std::to_string(strings.size()) + " elements of " +
                               std::to_string(encoded.width) + " characters overflow memory");
  }
  try {
    encoded.data.assign(strings.size() * element_bytes, '\0');
  } catch (const std::bad_alloc&) {
    return EncodeAllocationFailure(strings.size() * element_bytes, tensor);
  } catch (const std::length_error&) {
    return EncodeAllocationFailure(strings.size() * element_bytes, tensor);
  }
  for (size_t flat = 0; flat < strings.size(); ++flat) {
    EncodeElement(strings[flat], encoded.data.data() + flat * element_bytes);
  }
  return encoded;
}

}  // namespace convgate::io::internal
