// Byte-level helpers shared by the io readers. Private to io.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

namespace convgate::io::internal {

// Reverses the bytes of every element in place (big-endian <-> little-endian).
// REQUIRES: data.size() is a multiple of elem_size.
inline void SwapElementBytes(std::span<std::byte> data, size_t elem_size) {
  if (elem_size <= 1) return;
  for (size_t offset = 0; offset + elem_size <= data.size(); offset += elem_size) {
    std::byte* element = data.data() + offset;
    for (size_t low = 0, high = elem_size - 1; low < high; ++low, --high) {
      std::swap(element[low], element[high]);
    }
  }
}

// Bool bytes other than 0 and 1 are true to numpy and ONNX; storing them as 1 keeps bitwise
// comparisons and the writers' output canonical.
inline void NormalizeBools(std::span<std::byte> data) {
  for (std::byte& value : data) value = value != std::byte{0} ? std::byte{1} : std::byte{0};
}

}  // namespace convgate::io::internal
