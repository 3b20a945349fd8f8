// The one grammar for sizes and durations on every command line and in every environment
// variable: `--memory-budget 2GiB`, `cache prune --max-bytes 2GiB --min-age 2d`,
// `--timeout 10m`, CONVGATE_CACHE_MAX_BYTES=5G.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// A number (decimals allowed: "1.5G") followed by an optional unit, case-insensitive, no sign:
// none or B (bytes); K, KiB, M, MiB, G, GiB, T, TiB (powers of 1024); KB, MB, GB, TB (powers of
// 1000). The result is rounded down to whole bytes and must be 0 or at least 1 byte, and fit int64.
// InvalidArgument quoting the text and showing the grammar.
Result<int64_t> ParseByteSize(std::string_view text);

// A number of seconds (decimals allowed) followed by an optional unit: ms, s, m (minutes), h, d.
// "90", "1.5s", "10m", "2h", "1d". Finite and >= 0. InvalidArgument quoting the text.
Result<double> ParseDuration(std::string_view text);

// A time as the reports and stores write it: ISO 8601 in UTC, "2026-11-29T21:08:17Z".
std::string UtcIso8601(int64_t unix_seconds);
// The same of now.
std::string UtcIso8601Now();

// Sizes for messages and tables: "320 B", "1.5 MiB" (powers of 1024).
std::string FormatBytes(int64_t bytes);

// Durations for messages and help: "600 s", "10 min", "1 d"; whole units where exact.
std::string FormatDuration(double seconds);
// A measured duration for messages: three significant digits and the unit, "0.123 s", "2 s",
// "12.3 s", "1.23e+03 s". Every elapsed time, wait and timeout convgate prints is spelled by this.
std::string FormatSeconds(double seconds);

}  // namespace convgate
