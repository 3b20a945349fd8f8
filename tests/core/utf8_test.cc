#include "convgate/core/utf8.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace convgate
