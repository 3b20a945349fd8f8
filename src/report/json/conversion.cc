// Conversions and the conversion cache in JSON: `convert --json`, verify's "conversion" block and
// `cache list --json`.
#include "convgate/report/conversion.h"

#include <ctime>

#include "convgate/core/units.h"
#include "report/json/conversion.h"

namespace convgate::report {
namespace {

nlohmann::json OrNull(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

std::string IsoTime(int64_t unix_seconds) {
  return unix_seconds <= 0 ? "" : UtcIso8601(unix_seconds);
}

template <typename Io, typename Record>
void ConversionFields(Io& io, Record& record) {
  io.Text("kind", record.kind);
  io.Text("tool", record.tool);
  io.Text("tool_version", record.tool_version);
  io.Text("converter", record.converter);
  io.TextMap("params", record.params);
  io.Object("source", record, [](auto& part, auto& source) {
    part.Text("path", source.source_path);
    part.TextOrNull("sha256", source.source_sha256);
  });
  io.Object("output", record, [](auto& part, auto& output) {
    part.TextOrNull("sha256", output.output_sha256);
    if (output.output_sha256.empty()) {  // no output: its path and size are null
      part.Derived("path", nullptr);
      part.Derived("bytes", nullptr);
      return;
    }
    part.TextOrNull("path", output.output_path);
    part.Count("bytes", output.output_bytes);
  });
  io.Object("cache", record, [](auto& part, auto& cache) {
    part.TextOrNull("key", cache.cache_key);
    part.Bool("hit", cache.cache_hit);
    part.TextOrNull("path", cache.cache_path);
  });
  io.Number("seconds", record.seconds);
  io.Count("attempts", record.attempts);
  io.Texts("notes", record.notes);
  io.TextOrNull("log_tail", record.log_tail);
  io.ObjectOrNull("error", record, record.error == convert::ConversionError::kNone,
                  [](auto& part, auto& failed) {
                    part.Parsed("type", failed.error, convert::ConversionErrorName,
                                internal::ByName(convert::ConversionErrorName,
                                                 convert::ConversionError::kIoError));
                    part.Text("message", failed.error_message);
                  });
}
const auto kConversionFields = [](auto& io, auto& record) { ConversionFields(io, record); };

}  // namespace

nlohmann::json ConversionJson(const convert::ConversionRecord& record) {
  return internal::JsonWriter::Write(record, kConversionFields);
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

namespace internal {

convert::ConversionRecord ConversionFromJson(const JsonFields& json) {
  return JsonReader::Read<convert::ConversionRecord>(json, kConversionFields);
}

}  // namespace internal
}  // namespace convgate::report
