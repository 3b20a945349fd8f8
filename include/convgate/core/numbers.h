// Numbers typed by people: on command lines, in policy files, in conversion parameters. Whole
// text only (no trailing characters), no silent wrap-around: "-1" is never 2^64-1.
#pragma once

#include <cstdint>
#include <limits>
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
