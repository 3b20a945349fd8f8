#include "convgate/batch/cache_cleanup.h"

#include "convgate/core/units.h"

namespace convgate::batch {

Result<convert::PruneOptions> CacheCleanupOptions() { return convert::PruneOptionsFromEnv(); }

CacheCleanup CleanCache(const convert::PruneOptions& options) {
  CacheCleanup cleanup;
  cleanup.ran = true;
  cleanup.max_bytes = options.max_bytes;
  cleanup.min_age_seconds = options.min_age_seconds;
  Result<std::filesystem::path> root = convert::DefaultCacheDir();
  if (!root.ok()) {
    cleanup.error = root.status().message();
    return cleanup;
  }
  cleanup.cache_dir = root->string();
  std::error_code ec;
  if (!std::filesystem::exists(*root, ec)) return cleanup;
  Result<convert::PruneResult> pruned = convert::ConversionCache(*root).Prune(options);
  if (!pruned.ok()) {
    cleanup.error = pruned.status().message();
    return cleanup;
  }
  cleanup.entries_before = pruned->entries_before;
  cleanup.entries_removed = static_cast<int64_t>(pruned->removed.size());
  for (const convert::CacheEntry& entry : pruned->removed) cleanup.bytes_removed += entry.bytes;
  cleanup.bytes_after = pruned->bytes_after;
  cleanup.in_use = static_cast<int64_t>(pruned->in_use.size());
  return cleanup;
}

nlohmann::json CacheCleanupJson(const CacheCleanup& cleanup) {
  if (!cleanup.ran) return {{"ran", false}};
  nlohmann::json json = {{"ran", true},
                         {"cache_dir", cleanup.cache_dir},
                         {"max_bytes", cleanup.max_bytes},
                         {"min_age_seconds", cleanup.min_age_seconds},
                         {"entries_before", cleanup.entries_before},
                         {"entries_removed", cleanup.entries_removed},
                         {"bytes_removed", cleanup.bytes_removed},
                         {"bytes_after", cleanup.bytes_after},
                         {"in_use", cleanup.in_use}};
  json["error"] = cleanup.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(cleanup.error);
  return json;
}

std::string CacheCleanupText(const CacheCleanup& cleanup) {
  if (!cleanup.ran) return "";
  if (!cleanup.error.empty()) return "cache cleanup failed: " + cleanup.error + "\n";
  const std::string limits =
      " (limit " + FormatBytes(cleanup.max_bytes) + ", entries used in the " + "last " +
      FormatDuration(static_cast<double>(cleanup.min_age_seconds)) + " kept)";
  if (cleanup.entries_removed == 0) {
    return "cache cleanup: nothing removed from " + cleanup.cache_dir + ", " +
           std::to_string(cleanup.entries_before) + " entries, " +
           FormatBytes(cleanup.bytes_after) + limits + "\n";
  }
  return "cache cleanup: removed " + std::to_string(cleanup.entries_removed) + " of " +
         std::to_string(cleanup.entries_before) + " entries (" +
         FormatBytes(cleanup.bytes_removed) + ") from " + cleanup.cache_dir + ", " +
         FormatBytes(cleanup.bytes_after) + " left" + limits + "\n";
}

}  // namespace convgate::batch
