#include "compare/string_compare.h"

#include <cstdio>
#include <optional>
#include <span>

#include "compare/messages.h"
#include "convgate/core/shape.h"
#include "convgate/core/utf8.h"

namespace convgate::compare::internal {
namespace {

void AppendEscapedByte(unsigned char byte, std::string& out) {
  switch (byte) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  if (byte >= 0x20 && byte < 0x7F) {
    out.push_back(static_cast<char>(byte));
    return;
  }
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "\\x%02x", byte);
  out += buffer;
}

// "2 of 6 strings (33.3%) differ; first at [1]: source "monday", target "MONDAY"".
std::string StringMismatchMessage(const TensorComparison& result) {
  return std::to_string(result.mismatches) + " of " + std::to_string(result.num_elements) +
         " strings (" + FormatPercent(result.mismatches, result.num_elements) +
         "%) differ; first at " + FormatIndex(result.worst.index) + ": source " +
         QuoteString(result.worst.source_text) + ", target " +
         QuoteString(result.worst.target_text);
}

}  // namespace

std::string QuoteString(std::string_view text) {
  std::string out = "\"";
  size_t pos = 0;
  for (size_t chars = 0; pos < text.size() && chars < kMaxQuotedChars; ++chars) {
    const std::optional<Utf8Char> next = DecodeUtf8(text, pos);
    // U+0080..U+009F are C1 control characters: escaped like the C0 ones.
    if (next && next->length > 1 && next->code_point >= 0xA0) {
      out.append(text.substr(pos, next->length));
      pos += next->length;
    } else {
      AppendEscapedByte(static_cast<unsigned char>(text[pos]), out);
      ++pos;
    }
  }
  out += "\"";
  if (pos < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

void CompareStrings(const Tensor& source, const Tensor& target, TensorComparison& result) {
  const std::span<const std::string> source_strings = source.strings();
  const std::span<const std::string> target_strings = target.strings();
  int64_t first = -1;
  for (size_t flat = 0; flat < source_strings.size(); ++flat) {
    if (source_strings[flat] == target_strings[flat]) continue;
    if (first < 0) first = static_cast<int64_t>(flat);
    ++result.mismatches;
  }
  if (result.num_elements > 0) {
    result.mismatch_fraction =
        static_cast<double>(result.mismatches) / static_cast<double>(result.num_elements);
  }
  if (first < 0) return;
  ElementReport& worst = result.worst;
  worst.flat = first;
  worst.index = source.shape().Unravel(first);
  worst.source_text = source_strings[static_cast<size_t>(first)];
  worst.target_text = target_strings[static_cast<size_t>(first)];
  result.failures.push_back(StringMismatchMessage(result));
}

}  // namespace convgate::compare::internal
