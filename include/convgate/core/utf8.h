// UTF-8 for string tensors. ONNX strings are bytes that are UTF-8 by convention, numpy's str
// arrays hold UTF-32 code points, and messages must show strings readably: these are the
// conversions between them. Strict: overlong forms, surrogates and values above U+10FFFF are
// invalid, as in Python's 'utf-8' codec, so whatever decodes here encodes for numpy and back.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace convgate {

struct Utf8Char {
  char32_t code_point = 0;
  size_t length = 0;  // bytes taken, 1 to 4
};

// The character starting at text[pos]; nullopt for an invalid or truncated sequence (and for
// pos >= text.size()).
std::optional<Utf8Char> DecodeUtf8(std::string_view text, size_t pos);

// Not a surrogate (U+D800..U+DFFF) and at most U+10FFFF: what UTF-8 and Python's str can encode.
bool IsUnicodeScalar(char32_t code_point);

// Appends the UTF-8 encoding of `code_point`. REQUIRES: IsUnicodeScalar(code_point).
void AppendUtf8(char32_t code_point, std::string& out);

// Byte offset of the first invalid sequence in `text`; nullopt when all of it is valid UTF-8.
std::optional<size_t> FindInvalidUtf8(std::string_view text);

}  // namespace convgate
