// numpy's fixed-width string arrays in .npy data, to and from string tensors (internal to io).
//
// numpy stores str arrays as 'U<n>': n UTF-32 code units per element, and bytes arrays as 'S<n>':
// n bytes per element; shorter elements are padded with NULs, which numpy strips again when it
// reads an element, so trailing NULs never survive a round trip through numpy (embedded ones do).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "convgate/core/shape.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io::internal {

enum class NpyStringKind { kUnicode, kBytes };

// Widths above this are refused when reading: 2^32 characters per element is far beyond any real
// array, and it keeps 4 * width within size_t (the caller checks the product with the count).
inline constexpr size_t kMaxNpyStringWidth = size_t{1} << 32;

// Bytes one element takes: 4 * width for unicode, width for bytes.
// REQUIRES: width <= kMaxNpyStringWidth.
size_t NpyStringElementBytes(NpyStringKind kind, size_t width);

// Decodes C-order element data (NpyStringElementBytes each) into a kString tensor. Unicode code
// units are converted to UTF-8 (big-endian ones when `big_endian`); bytes are kept as they are.
// Trailing NULs of each element are dropped as numpy drops them. DataLoss naming the element for a
// code unit that is not a Unicode scalar value (a surrogate or above U+10FFFF): UTF-8 cannot hold
// it. REQUIRES: data.size() == shape.NumElements() * NpyStringElementBytes(kind, width).
Result<Tensor> DecodeNpyStrings(std::string_view data, const Shape& shape, NpyStringKind kind,
                                size_t width, bool big_endian);

struct EncodedNpyStrings {
  size_t width = 1;  // code points per element: the longest element's, at least 1 as in numpy
  std::string data;  // little-endian UTF-32, NUL-padded, C order
};

// Encodes a kString tensor as numpy '<U<width>' data. InvalidArgument naming the element (and the
// byte offset) when an element is not valid UTF-8: numpy's str holds text, and bytes that are not
// UTF-8 have no faithful spelling in it. REQUIRES: tensor.dtype() == kString.
Result<EncodedNpyStrings> EncodeNpyUnicode(const Tensor& tensor);

}  // namespace convgate::io::internal
