// Where the cache lives and the pruning thresholds from the environment.
#include <charconv>
#include <cstdlib>
#include <limits>

#include "convgate/convert/cache.h"

namespace convgate::convert {
namespace {

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

// Parses "<digits><suffix>" where suffix is looked up in `units` (an empty suffix is allowed when
// `units` maps "" to 1).
Result<int64_t> ParseWithUnits(const std::string& text,
                               std::initializer_list<std::pair<std::string_view, int64_t>> units,
                               std::string_view what) {
  int64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error == std::errc() && number >= 0) {
    const std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
    for (const auto& [unit, factor] : units) {
      if (suffix != unit) continue;
      if (number > std::numeric_limits<int64_t>::max() / factor) break;
      return number * factor;
    }
  }
  return Status::InvalidArgument("'" + text + "' is not " + std::string(what));
}

Result<int64_t> FromEnv(const char* name, const char* value,
                        Result<int64_t> (*parse)(const std::string&)) {
  Result<int64_t> parsed = parse(value);
  if (!parsed.ok()) return parsed.status().WithContext(name);
  return parsed;
}

Result<int64_t> ParseDecimalGigabytes(const std::string& text) {
  return ParseWithUnits(text, {{"", 1000 * 1000 * 1000}}, "a whole number of GB");
}

Result<int64_t> ParseDays(const std::string& text) {
  return ParseWithUnits(text, {{"", 24 * 3600}}, "a whole number of days");
}

}  // namespace

Result<std::filesystem::path> DefaultCacheDir() {
  if (const char* dir = NonEmptyEnv("CONVGATE_CACHE_DIR")) return std::filesystem::path(dir);
  if (const char* home = NonEmptyEnv("HOME")) {
    return std::filesystem::path(home) / ".cache" / "convgate";
  }
  return Status::FailedPrecondition(
      "no cache directory: set CONVGATE_CACHE_DIR (or HOME), or pass --no-cache");
}

Result<int64_t> ParseByteSize(const std::string& text) {
  constexpr int64_t kKi = 1024;
  return ParseWithUnits(
      text,
      {{"", 1}, {"K", kKi}, {"M", kKi * kKi}, {"G", kKi * kKi * kKi}, {"T", kKi * kKi * kKi * kKi}},
      "a size in bytes (digits, optionally followed by K, M, G or T)");
}

Result<int64_t> ParseDuration(const std::string& text) {
  return ParseWithUnits(text, {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 24 * 3600}},
                        "a duration (seconds, optionally followed by s, m, h or d)");
}

Result<PruneOptions> PruneOptionsFromEnv() {
  PruneOptions options;
  if (const char* value = NonEmptyEnv("CONVGATE_CACHE_MAX_BYTES")) {
    CONVGATE_ASSIGN_OR_RETURN(options.max_bytes,
                              FromEnv("CONVGATE_CACHE_MAX_BYTES", value, ParseByteSize));
  } else if (const char* gigabytes = NonEmptyEnv("CACHE_CLEANUP_THRESHOLD")) {
    CONVGATE_ASSIGN_OR_RETURN(options.max_bytes,
                              FromEnv("CACHE_CLEANUP_THRESHOLD", gigabytes, ParseDecimalGigabytes));
  }
  if (const char* value = NonEmptyEnv("CONVGATE_CACHE_MIN_AGE_SECONDS")) {
    CONVGATE_ASSIGN_OR_RETURN(options.min_age_seconds,
                              FromEnv("CONVGATE_CACHE_MIN_AGE_SECONDS", value, ParseDuration));
  } else if (const char* days = NonEmptyEnv("CACHE_CLEANUP_MIN_AGE_DAYS")) {
    CONVGATE_ASSIGN_OR_RETURN(options.min_age_seconds,
                              FromEnv("CACHE_CLEANUP_MIN_AGE_DAYS", days, ParseDays));
  }
  return options;
}

}  // namespace convgate::convert
