#include "convgate/core/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <optional>

#include "convgate/core/numbers.h"

namespace convgate {
namespace {

struct Unit {
  std::string_view name;  // lower case
  double factor;
};

constexpr double kKi = 1024.0;
constexpr Unit kSizeUnits[] = {
    {"", 1},
    {"b", 1},
    {"k", kKi},
    {"kib", kKi},
    {"kb", 1e3},
    {"m", kKi* kKi},
    {"mib", kKi* kKi},
    {"mb", 1e6},
    {"g", kKi* kKi* kKi},
    {"gib", kKi* kKi* kKi},
    {"gb", 1e9},
    {"t", kKi* kKi* kKi* kKi},
    {"tib", kKi* kKi* kKi* kKi},
    {"tb", 1e12},
};

constexpr Unit kDurationUnits[] = {
    {"", 1}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400},
};

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// "1.5GiB" -> 1.5 * 2^30 when every character is accounted for; nullopt otherwise. No sign, no
// exponent and no spaces: a size or duration typed on a command line never needs them, and
// accepting "-1" is how a wrap-around to 2^64-1 starts.
template <size_t N>
std::optional<double> ParseWithUnit(std::string_view text, const Unit (&units)[N]) {
  const std::string lower = Lower(text);
  size_t digits_end = 0;
  while (
      digits_end < lower.size() &&
      (std::isdigit(static_cast<unsigned char>(lower[digits_end])) || lower[digits_end] == '.')) {
    ++digits_end;
  }
  if (digits_end == 0) return std::nullopt;
  double number = 0.0;
  const char* begin = lower.data();
  const auto [end, error] = std::from_chars(begin, begin + digits_end, number);
  if (error != std::errc() || end != begin + digits_end) return std::nullopt;
  const std::string_view unit = std::string_view(lower).substr(digits_end);
  for (const Unit& known : units) {
    if (unit == known.name) return number * known.factor;
  }
  return std::nullopt;
}

}  // namespace

Result<int64_t> ParseByteSize(std::string_view text) {
  const std::optional<double> bytes = ParseWithUnit(text, kSizeUnits);
  // 9.2e18 is the largest double below INT64_MAX's neighbourhood that converts safely.
  // Zero is a size (prune everything); a fraction of a byte is a typo.
  if (!bytes || !(*bytes == 0.0 || *bytes >= 1.0) || *bytes > 9.2e18) {
    return Status::InvalidArgument(
        "size '" + std::string(text) +
        "': expected a number of bytes with an optional unit, e.g. 4096, 512MiB, 2GiB, 1.5G, "
        "64MB (K, M, G, T = powers of 1024; KB, MB, GB, TB = powers of 1000)");
  }
  return static_cast<int64_t>(*bytes);
}

Result<double> ParseDuration(std::string_view text) {
  const std::optional<double> seconds = ParseWithUnit(text, kDurationUnits);
  if (!seconds || !std::isfinite(*seconds)) {
    return Status::InvalidArgument(
        "duration '" + std::string(text) +
        "': expected seconds with an optional unit, e.g. 90, 1.5s, 500ms, 10m, 2h, 1d");
  }
  return *seconds;
}

std::string FormatBytes(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string FormatSeconds(double seconds) { return FormatSignificant(seconds, 3) + " s"; }

std::string FormatDuration(double seconds) {
  for (const auto& [unit, factor] : {std::pair{"d", 86400.0}, {"h", 3600.0}, {"min", 60.0}}) {
    const double count = seconds / factor;
    if (count >= 1.0 && count == std::floor(count)) {
      return std::to_string(static_cast<int64_t>(count)) + " " + unit;
    }
  }
  return FormatSignificant(seconds) + " s";
}

std::string UtcIso8601(int64_t unix_seconds) {
  const std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string UtcIso8601Now() { return UtcIso8601(static_cast<int64_t>(std::time(nullptr))); }

}  // namespace convgate
