// Conversions and the conversion cache as console text: `convert` and `cache list`.
#include "convgate/report/conversion.h"

#include <cstdio>

#include "convgate/core/units.h"
#include "report/text/table.h"

namespace convgate::report {
namespace {

std::string FormatAge(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return std::to_string(seconds) + " s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + " min";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + " h";
  return std::to_string(seconds / 86400) + " d";
}

}  // namespace

std::string ConversionText(const convert::ConversionRecord& record) {
  std::string text = "converted " + record.source_path + " -> " + record.output_path + "\n";
  text += "  kind       " + record.kind + " (" + record.tool + " " + record.tool_version + ")\n";
  std::string cache = record.cache_key.empty() ? "off" : record.cache_hit ? "hit" : "miss";
  if (!record.cache_path.empty()) cache += " (" + record.cache_path + ")";
  text += "  cache      " + cache + "\n";
  text += "  took       " + FormatSeconds(record.seconds) + ", " + std::to_string(record.attempts) +
          " converter run(s)\n";
  text += "  sha256     " + record.output_sha256 + " (" + FormatBytes(record.output_bytes) + ")\n";
  for (const std::string& note : record.notes) text += "  note       " + note + "\n";
  return text;
}

// PARAMS tells apart two entries of one source and kind (weight_format=int4 and int8); TOOL,
// the longest, comes last.
std::string CacheListText(const std::vector<convert::CacheEntry>& entries, int64_t now_unix) {
  internal::Table table({"KEY", "SIZE", "LAST USED", "KIND", "PARAMS", "SOURCE", "TOOL"});
  int64_t total = 0;
  for (const convert::CacheEntry& entry : entries) {
    total += entry.bytes;
    const convert::CachedConversion& record = entry.record;
    std::string params;
    for (const auto& [name, value] : record.params) {
      params += (params.empty() ? "" : " ") + name + "=" + value;
    }
    table.AddRow({record.key.substr(0, 12), FormatBytes(entry.bytes),
                  FormatAge(now_unix - entry.last_used_unix) + " ago",
                  entry.readable ? record.kind : "(unreadable record)",
                  params.empty() ? "-" : params, record.source_path,
                  record.tool + (record.tool_version.empty() ? "" : " " + record.tool_version)});
  }
  return table.Render(false) + std::to_string(entries.size()) + " entr" +
         (entries.size() == 1 ? "y" : "ies") + ", " + FormatBytes(total) + "\n";
}
}  // namespace convgate::report
