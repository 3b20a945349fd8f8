// Conversions and the conversion cache in JSON: `convert --json`, verify's "conversion" block and
// `cache list --json`.
#include "convgate/report/conversion.h"

#include <ctime>

namespace convgate::report {
namespace {

nlohmann::json OrNull(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

std::string IsoTime(int64_t unix_seconds) {
  if (unix_seconds <= 0) return "";
  const std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

}  // namespace

nlohmann::json ConversionJson(const convert::ConversionRecord& record) {
  nlohmann::json error = nullptr;
  if (record.error != convert::ConversionError::kNone) {
    error = {{"type", std::string(convert::ConversionErrorName(record.error))},
             {"message", record.error_message}};
  }
  const bool has_output = !record.output_sha256.empty();
  return {{"kind", record.kind},
          {"tool", record.tool},
          {"tool_version", record.tool_version},
          {"converter", record.converter},
          {"params", record.params},
          {"source", {{"path", record.source_path}, {"sha256", OrNull(record.source_sha256)}}},
          {"output",
           {{"path", has_output ? OrNull(record.output_path) : nlohmann::json(nullptr)},
            {"sha256", OrNull(record.output_sha256)},
            {"bytes", has_output ? nlohmann::json(record.output_bytes) : nlohmann::json(nullptr)}}},
          {"cache",
           {{"key", OrNull(record.cache_key)},
            {"hit", record.cache_hit},
            {"path", OrNull(record.cache_path)}}},
          {"seconds", record.seconds},
          {"attempts", record.attempts},
          {"notes", record.notes},
          {"log_tail", OrNull(record.log_tail)},
          {"error", error}};
}

nlohmann::json CacheEntryJson(const convert::CacheEntry& entry) {
  const convert::CachedConversion& record = entry.record;
  return {{"key", record.key},
          {"path", entry.dir.string()},
          {"readable", entry.readable},
          {"kind", OrNull(record.kind)},
          {"tool", OrNull(record.tool)},
          {"tool_version", OrNull(record.tool_version)},
          {"source", OrNull(record.source_path)},
          {"bytes", entry.bytes},
          {"created", OrNull(IsoTime(record.created_unix))},
          {"last_used", OrNull(IsoTime(entry.last_used_unix))}};
}

}  // namespace convgate::report
