// Numbers typed by people (on command lines, in policy files, in conversion parameters) and
// numbers written for them. Parsing takes whole text only (no trailing characters), no silent
// wrap-around: "-1" is never 2^64-1.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// A decimal integer in [min, max]. InvalidArgument quoting the text and stating the range.
Result<int64_t> ParseInteger(std::string_view text, int64_t min, int64_t max);
// A non-negative decimal integer up to 2^64-1 (seeds).
Result<uint64_t> ParseUnsigned(std::string_view text);
// A finite decimal or scientific number in [min, max] ("+1e-3" allowed). InvalidArgument quoting
// the text and stating the range.
Result<double> ParseNumber(std::string_view text, double min, double max);

// The one family of number formatters (src/report keeps its own until its rewrite lands):
// FormatSignificant is printf's %.<digits>g ("0.001", "1e-05", "1.5", "nan", "-inf"): for tables
// and messages, %.3g for timings and percentages, 6 digits (printf's %g) for values, more where a
// limit must read back. REQUIRES: 1 <= digits <= 17.
std::string FormatSignificant(double value, int digits = 6);
// The shortest text that reads back as the same double (std::to_chars: "0.1", "1e-05", "nan"):
// for JSON and for values a user may paste back into a flag (tolerances).
std::string FormatShortest(double value);

// Sums and products of non-negative counts read from untrusted files (dims, byte sizes) that
// saturate at INT64_MAX instead of overflowing (undefined behaviour for int64_t).
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}
inline int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<int64_t>::max() : product;
}

}  // namespace convgate
