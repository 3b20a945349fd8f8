#include "convgate/core/utf8.h"

#include <cstdint>

namespace convgate {
namespace {

bool IsContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Smallest code point that needs `length` bytes: anything below it is an overlong form, which
// RFC 3629 forbids (it would let two byte strings decode to the same text).
constexpr char32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};

}  // namespace

std::optional<Utf8Char> DecodeUtf8(std::string_view text, size_t pos) {
  if (pos >= text.size()) return std::nullopt;
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) return Utf8Char{lead, 1};
  size_t length = 0;
  char32_t code_point = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code_point = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code_point = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return std::nullopt;  // a continuation byte or 0xF8..0xFF where a character should start
  }
  if (text.size() - pos < length) return std::nullopt;
  for (size_t idx = 1; idx < length; ++idx) {
    const auto byte = static_cast<unsigned char>(text[pos + idx]);
    if (!IsContinuation(byte)) return std::nullopt;
    code_point = (code_point << 6) | (byte & 0x3F);
  }
  if (code_point < kMinForLength[length] || !IsUnicodeScalar(code_point)) return std::nullopt;
  return Utf8Char{code_point, length};
}

bool IsUnicodeScalar(char32_t code_point) {
  return code_point <= 0x10FFFF && (code_point < 0xD800 || code_point > 0xDFFF);
}

void AppendUtf8(char32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

std::optional<size_t> FindInvalidUtf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const std::optional<Utf8Char> next = DecodeUtf8(text, pos);
    if (!next) return pos;
    pos += next->length;
  }
  return std::nullopt;
}

}  // namespace convgate
