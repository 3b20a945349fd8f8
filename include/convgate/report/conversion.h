// Rendering conversions: the `conversion` block of report.json (for `convert --json` and the
// verify command), the console text of `convert`, and the conversion cache's listings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/convert/cache.h"
#include "convgate/convert/convert.h"
#include "convgate/core/units.h"  // FormatBytes, used with these renderings

namespace convgate::report {

// {"kind", "tool", "tool_version", "converter", "params", "source": {"path", "sha256"},
//  "output": {"path", "sha256", "bytes"}, "cache": {"key", "hit", "path"}, "seconds",
//  "attempts", "notes", "log_tail", "error": null | {"type", "message"}}.
// Paths and hashes not known (a failed conversion) are null.
nlohmann::json ConversionJson(const convert::ConversionRecord& record);

// "converted a.onnx -> b.onnx (fp16 by convgate fp16 0.1.0) in 0.12 s; cache miss ..." and notes.
std::string ConversionText(const convert::ConversionRecord& record);

// One cache entry: {"key", "kind", "tool", "tool_version", "source", "bytes", "last_used",
// "created", "readable", "path"} (times as ISO 8601 UTC).
nlohmann::json CacheEntryJson(const convert::CacheEntry& entry);

// A table of entries, most recently used first, with a total line.
std::string CacheListText(const std::vector<convert::CacheEntry>& entries, int64_t now_unix);

}  // namespace convgate::report
