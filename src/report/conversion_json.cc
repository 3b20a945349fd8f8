// Conversions and the conversion cache, as JSON and as console text.
#include <cstdio>
#include <ctime>

#include "convgate/report/conversion.h"
#include "report/table.h"

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

std::string FormatAge(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return std::to_string(seconds) + " s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + " min";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + " h";
  return std::to_string(seconds / 86400) + " d";
}

std::string FormatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", seconds);
  return text;
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

std::string ConversionText(const convert::ConversionRecord& record) {
  std::string text = "converted " + record.source_path + " -> " + record.output_path + "\n";
  text += "  kind       " + record.kind + " (" + record.tool + " " + record.tool_version + ")\n";
  std::string cache = record.cache_key.empty() ? "off" : record.cache_hit ? "hit" : "miss";
  if (!record.cache_path.empty()) cache += " (" + record.cache_path + ")";
  text += "  cache      " + cache + "\n";
  text += "  took       " + FormatSeconds(record.seconds) + " s, " +
          std::to_string(record.attempts) + " converter run(s)\n";
  text += "  sha256     " + record.output_sha256 + " (" + FormatBytes(record.output_bytes) + ")\n";
  for (const std::string& note : record.notes) text += "  note       " + note + "\n";
  return text;
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

std::string CacheListText(const std::vector<convert::CacheEntry>& entries, int64_t now_unix) {
  internal::Table table({"KEY", "SIZE", "LAST USED", "KIND", "TOOL", "SOURCE"});
  int64_t total = 0;
  for (const convert::CacheEntry& entry : entries) {
    total += entry.bytes;
    const convert::CachedConversion& record = entry.record;
    table.AddRow({record.key.substr(0, 12), FormatBytes(entry.bytes),
                  FormatAge(now_unix - entry.last_used_unix) + " ago",
                  entry.readable ? record.kind : "(unreadable record)",
                  record.tool + (record.tool_version.empty() ? "" : " " + record.tool_version),
                  record.source_path});
  }
  return table.Render(false) + std::to_string(entries.size()) + " entr" +
         (entries.size() == 1 ? "y" : "ies") + ", " + FormatBytes(total) + "\n";
}
}  // namespace convgate::report
