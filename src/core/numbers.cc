#include "convgate/core/numbers.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace convgate {
namespace {

std::string Quote(std::string_view text) { return "'" + std::string(text) + "'"; }

// "%g" with enough digits for any limit a caller passes (1e-12, 1000000, 1e308).
std::string Show(double value) {
  if (value == std::numeric_limits<double>::max()) return "any";
  if (value == std::numeric_limits<double>::lowest()) return "any";
  return FormatSignificant(value, 10);
}

std::string RangeText(double min, double max) {
  const bool no_min = min == std::numeric_limits<double>::lowest();
  const bool no_max = max == std::numeric_limits<double>::max();
  if (no_min && no_max) return "a finite number";
  if (no_max) return "a finite number >= " + Show(min);
  if (no_min) return "a finite number <= " + Show(max);
  return "a number in [" + Show(min) + ", " + Show(max) + "]";
}

}  // namespace

std::string FormatSignificant(double value, int digits) {
  char buffer[64];  // %.17g of any double takes at most 24 characters
  std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
  return buffer;
}

std::string FormatShortest(double value) {
  char buffer[64];
  const std::to_chars_result end = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end.ptr);
}

Result<int64_t> ParseInteger(std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool whole = !text.empty() && error == std::errc() && end == text.data() + text.size();
  if (whole && value >= min && value <= max) return value;
  std::string range = "an integer";
  if (max == std::numeric_limits<int64_t>::max()) {
    range += " >= " + std::to_string(min);
  } else {
    range += " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  }
  return Status::InvalidArgument(Quote(text) + " is not " + range);
}

Result<uint64_t> ParseUnsigned(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size()) return value;
  return Status::InvalidArgument(Quote(text) + " is not an integer in [0, " +
                                 std::to_string(std::numeric_limits<uint64_t>::max()) + "]");
}

Result<double> ParseNumber(std::string_view text, double min, double max) {
  std::string_view digits = text;
  // from_chars takes no '+', but "+1e-3" is a natural thing to type.
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  double value = 0.0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const bool whole =
      !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
  if (whole && std::isfinite(value) && value >= min && value <= max) return value;
  return Status::InvalidArgument(Quote(text) + " is not " + RangeText(min, max));
}

}  // namespace convgate
