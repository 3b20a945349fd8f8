#include "convgate/core/utf8.h"

#include <cstdint>
#include <cstdio>

namespace convgate {
namespace {

bool IsContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Smallest code point that needs `length` bytes: anything below it is an overlong form, which
// RFC 3629 forbids (it would let two byte strings decode to the same text).
constexpr char32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};

void AppendHexByte(unsigned char byte, std::string& out) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "\\x%02x", byte);
  out += buffer;
}

void AppendHexBytes(std::string_view bytes, std::string& out) {
  for (char byte : bytes) AppendHexByte(static_cast<unsigned char>(byte), out);
}

// Characters a person should not be shown raw: controls move the cursor or drive the terminal,
// and XML 1.0 cannot hold them (nor the noncharacters U+FFFE and U+FFFF) even as references.
bool IsHiddenCharacter(char32_t code_point) {
  if (code_point == U'\n' || code_point == U'\t') return false;
  return code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F) || code_point == 0xFFFE ||
         code_point == 0xFFFF;
}

std::optional<int> HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

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

std::string EscapeInvalidUtf8(std::string_view text) {
  if (!FindInvalidUtf8(text).has_value()) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  size_t pos = 0;
  while (pos < text.size()) {
    const std::optional<Utf8Char> next = DecodeUtf8(text, pos);
    if (!next) {
      AppendHexByte(static_cast<unsigned char>(text[pos]), out);
      ++pos;
      continue;
    }
    if (text[pos] == '\\') {
      out += "\\\\";
    } else {
      out.append(text.substr(pos, next->length));
    }
    pos += next->length;
  }
  return out;
}

std::optional<std::string> UnescapeInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (text[pos] != '\\') {
      out.push_back(text[pos]);
      continue;
    }
    if (pos + 1 < text.size() && text[pos + 1] == '\\') {
      out.push_back('\\');
      ++pos;
      continue;
    }
    if (text.size() - pos < 4) return std::nullopt;  // "\xNN" needs 4 bytes
    const std::optional<int> high = HexDigit(text[pos + 2]);
    const std::optional<int> low = HexDigit(text[pos + 3]);
    if (text[pos + 1] != 'x' || !high || !low) return std::nullopt;
    out.push_back(static_cast<char>(*high * 16 + *low));
    pos += 3;
  }
  return out;
}

std::string EscapeForDisplay(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const std::optional<Utf8Char> next = DecodeUtf8(text, pos);
    const size_t length = next ? next->length : 1;
    if (!next || IsHiddenCharacter(next->code_point)) {
      AppendHexBytes(text.substr(pos, length), out);
    } else {
      out.append(text.substr(pos, length));
    }
    pos += length;
  }
  return out;
}

}  // namespace convgate
