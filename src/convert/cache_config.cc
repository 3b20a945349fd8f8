// Where the cache lives and the pruning thresholds from the environment.
#include <charconv>
#include <cstdlib>
#include <limits>

#include "convgate/convert/cache.h"
#include "convgate/core/units.h"

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

// The project's size and duration grammar (core/units.h), in the shape FromEnv takes.
Result<int64_t> ParseBytes(const std::string& text) { return ParseByteSize(text); }

Result<int64_t> ParseSeconds(const std::string& text) {
  CONVGATE_ASSIGN_OR_RETURN(const double seconds, ParseDuration(text));
  return static_cast<int64_t>(seconds);
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

Result<PruneOptions> PruneOptionsFromEnv() {
  PruneOptions options;
  if (const char* value = NonEmptyEnv("CONVGATE_CACHE_MAX_BYTES")) {
    CONVGATE_ASSIGN_OR_RETURN(options.max_bytes,
                              FromEnv("CONVGATE_CACHE_MAX_BYTES", value, ParseBytes));
  } else if (const char* gigabytes = NonEmptyEnv("CACHE_CLEANUP_THRESHOLD")) {
    CONVGATE_ASSIGN_OR_RETURN(options.max_bytes,
                              FromEnv("CACHE_CLEANUP_THRESHOLD", gigabytes, ParseDecimalGigabytes));
  }
  if (const char* value = NonEmptyEnv("CONVGATE_CACHE_MIN_AGE_SECONDS")) {
    CONVGATE_ASSIGN_OR_RETURN(options.min_age_seconds,
                              FromEnv("CONVGATE_CACHE_MIN_AGE_SECONDS", value, ParseSeconds));
  } else if (const char* days = NonEmptyEnv("CACHE_CLEANUP_MIN_AGE_DAYS")) {
    CONVGATE_ASSIGN_OR_RETURN(options.min_age_seconds,
                              FromEnv("CACHE_CLEANUP_MIN_AGE_DAYS", days, ParseDays));
  }
  return options;
}

}  // namespace convgate::convert
