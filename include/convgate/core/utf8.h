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

// Any byte string made valid UTF-8 for machine-readable text (JSON), reversibly. Valid UTF-8 is
// returned unchanged. Otherwise each byte that does not start a valid sequence becomes `\xNN`
// (lower-case hex) and each backslash `\\`, so UnescapeInvalidUtf8 restores the exact bytes: a
// reader told which strings were escaped (report.json's "escaped_strings") gets the raw name or
// path back, and one who is not still sees which bytes were bad. Model names, paths, argv and a
// runner's stderr are bytes: nothing guarantees they are UTF-8, and JSON can only hold UTF-8.
std::string EscapeInvalidUtf8(std::string_view text);

// The inverse of EscapeInvalidUtf8 on a string it changed: `\xNN` is the byte NN, `\\` one
// backslash. nullopt when a backslash starts neither (the text was not escaped by it).
std::optional<std::string> UnescapeInvalidUtf8(std::string_view text);

// Any byte string made safe to show to people: on a terminal, in a log line, in XML 1.0. Valid
// printable UTF-8 is kept, and so are \n and \t; every other byte is written `\xNN`: invalid
// UTF-8, C0 controls, DEL, the bytes of C1 controls (U+0080..U+009F) and of U+FFFE/U+FFFF (which
// XML forbids). A name holding ESC cannot drive the terminal, one holding \r cannot overwrite
// the line. Not reversible (a literal "\xff" reads the same): EscapeInvalidUtf8 is for machines.
std::string EscapeForDisplay(std::string_view text);

}  // namespace convgate
