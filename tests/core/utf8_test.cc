#include "convgate/core/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace convgate {
namespace {

std::string Encode(char32_t code_point) {
  std::string out;
  AppendUtf8(code_point, out);
  return out;
}

TEST(Utf8, EncodesAndDecodesEveryLength) {
  const struct {
    char32_t code_point;
    std::string bytes;
  } cases[] = {
      {U'a', "a"},
      {0x00, std::string(1, '\0')},
      {0xE9, "\xC3\xA9"},
      {0x7FF, "\xDF\xBF"},
      {0x20AC, "\xE2\x82\xAC"},
      {0xFFFF, "\xEF\xBF\xBF"},
      {0x1F600, "\xF0\x9F\x98\x80"},
      {0x10FFFF, "\xF4\x8F\xBF\xBF"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Encode(c.code_point), c.bytes) << static_cast<uint32_t>(c.code_point);
    std::optional<Utf8Char> decoded = DecodeUtf8(c.bytes, 0);
    ASSERT_TRUE(decoded.has_value()) << static_cast<uint32_t>(c.code_point);
    EXPECT_EQ(decoded->code_point, c.code_point);
    EXPECT_EQ(decoded->length, c.bytes.size());
  }
}

TEST(Utf8, RejectsWhatPythonsCodecRejects) {
  const std::string invalid[] = {
      "\x80",              // continuation byte first
      "\xC3",              // truncated
      "\xC0\xAF",          // overlong '/'
      "\xE0\x80\xAF",      // overlong '/'
      "\xED\xA0\x80",      // surrogate U+D800
      "\xF4\x90\x80\x80",  // U+110000
      "\xF8\x88\x80\x80",  // five-byte form
      "\xE2\x28\xA1",      // bad continuation
  };
  for (const std::string& bytes : invalid) {
    EXPECT_FALSE(DecodeUtf8(bytes, 0).has_value()) << bytes;
    EXPECT_EQ(FindInvalidUtf8("ok" + bytes), 2u) << bytes;
  }
  EXPECT_EQ(FindInvalidUtf8("Köln €"), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8(""), std::nullopt);
  EXPECT_FALSE(DecodeUtf8("a", 1).has_value());
}

TEST(Utf8, ScalarValues) {
  EXPECT_TRUE(IsUnicodeScalar(0));
  EXPECT_TRUE(IsUnicodeScalar(0xD7FF));
  EXPECT_FALSE(IsUnicodeScalar(0xD800));
  EXPECT_FALSE(IsUnicodeScalar(0xDFFF));
  EXPECT_TRUE(IsUnicodeScalar(0xE000));
  EXPECT_TRUE(IsUnicodeScalar(0x10FFFF));
  EXPECT_FALSE(IsUnicodeScalar(0x110000));
}

TEST(Utf8, EscapeInvalidUtf8KeepsValidTextAsItIs) {
  for (const std::string& text :
       std::vector<std::string>{"", "logits", "K\xc3\xb6ln \xe2\x82\xac", "C:\\temp\\x.onnx",
                                std::string("nul\0inside", 10), "tab\tand\nnewline"}) {
    EXPECT_EQ(EscapeInvalidUtf8(text), text);
  }
}

TEST(Utf8, EscapeInvalidUtf8SpellsBadBytesAndRoundTrips) {
  const struct {
    std::string bytes;
    std::string escaped;
  } cases[] = {
      {"\xff", "\\xff"},
      {"y\xfe\xfd", "y\\xfe\\xfd"},
      {"\xc3", "\\xc3"},                        // truncated sequence
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},      // a surrogate, byte by byte
      {"caf\xc3\xa9\x80", "caf\xc3\xa9\\x80"},  // the valid character stays
      {"a\\b\xff", "a\\\\b\\xff"},              // backslashes doubled, so...
      {"\\xff\xff", "\\\\xff\\xff"},            // ...a literal "\xff" stays distinct
  };
  for (const auto& c : cases) {
    const std::string escaped = EscapeInvalidUtf8(c.bytes);
    EXPECT_EQ(escaped, c.escaped);
    EXPECT_EQ(FindInvalidUtf8(escaped), std::nullopt) << escaped;
    EXPECT_EQ(UnescapeInvalidUtf8(escaped), c.bytes) << escaped;
  }
}

TEST(Utf8, UnescapeInvalidUtf8RefusesTextItDidNotEscape) {
  for (const std::string& text :
       std::vector<std::string>{"\\", "\\x", "\\xf", "\\xzz", "\\n", "a\\"}) {
    EXPECT_EQ(UnescapeInvalidUtf8(text), std::nullopt) << text;
  }
  EXPECT_EQ(UnescapeInvalidUtf8("plain"), "plain");
  EXPECT_EQ(UnescapeInvalidUtf8("\\x41\\x4A"), "AJ");
}

TEST(Utf8, EscapeForDisplayHidesControlsAndBadBytes) {
  const struct {
    std::string bytes;
    std::string shown;
  } cases[] = {
      {"logits", "logits"},
      {"K\xc3\xb6ln \xe2\x82\xac", "K\xc3\xb6ln \xe2\x82\xac"},
      {"line\nnext\tcol", "line\nnext\tcol"},
      {"\x1b[2Jclear", "\\x1b[2Jclear"},  // ESC cannot drive the terminal
      {"over\rwrite", "over\\x0dwrite"},
      {std::string("y\0hidden", 8), "y\\x00hidden"},
      {"del\x7f", "del\\x7f"},
      {"c1\xc2\x85", "c1\\xc2\\x85"},                     // U+0085, a C1 control
      {"nonchar\xef\xbf\xbe", "nonchar\\xef\\xbf\\xbe"},  // U+FFFE, not an XML character
      {"\xff\xfe.onnx", "\\xff\\xfe.onnx"},
      {"a\\b", "a\\b"},  // backslashes as they are: for people
  };
  for (const auto& c : cases) {
    const std::string shown = EscapeForDisplay(c.bytes);
    EXPECT_EQ(shown, c.shown);
    EXPECT_EQ(FindInvalidUtf8(shown), std::nullopt) << shown;
  }
}

}  // namespace
}  // namespace convgate
