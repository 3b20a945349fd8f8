// Numbers typed by people: on command lines, in policy files, in conversion parameters. Whole
// text only (no trailing characters), no silent wrap-around: "-1" is never 2^64-1.
#pragma once

#include <cstdint>
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

}  // namespace convgate
