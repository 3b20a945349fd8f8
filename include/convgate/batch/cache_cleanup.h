// The reference pipeline's cache cleanup after each batch: `convgate cache prune` with the
// thresholds of the environment (CACHE_CLEANUP_THRESHOLD in GB or CONVGATE_CACHE_MAX_BYTES,
// CACHE_CLEANUP_MIN_AGE_DAYS or CONVGATE_CACHE_MIN_AGE_SECONDS; convert/cache.h
// PruneOptionsFromEnv), so a nightly batch that converts leaves the cache within its limit.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "convgate/convert/cache.h"

namespace convgate::batch {

struct CacheCleanup {
  bool ran = false;  // false: --no-cache-cleanup, or the batch was interrupted
  std::string cache_dir;
  int64_t max_bytes = 0;
  int64_t min_age_seconds = 0;
  int64_t entries_before = 0;
  int64_t entries_removed = 0;
  int64_t bytes_removed = 0;
  int64_t bytes_after = 0;
  int64_t in_use = 0;  // entries another convgate held, left in place
  std::string error;   // the cache could not be read or changed (the batch's result stands)
};

// The prune options the environment sets; InvalidArgument naming a malformed variable (checked
// before any job runs, so a typo is a usage error, not a surprise after an hour of jobs).
Result<convert::PruneOptions> CacheCleanupOptions();

// Prunes the conversion cache (CONVGATE_CACHE_DIR, else ~/.cache/convgate) with `options`. A
// cache folder that does not exist is an empty cache.
CacheCleanup CleanCache(const convert::PruneOptions& options);

nlohmann::json CacheCleanupJson(const CacheCleanup& cleanup);
// "cache cleanup: removed 3 entries (1.2 GB) from /root/.cache/convgate (limit 10 GiB, ...)".
std::string CacheCleanupText(const CacheCleanup& cleanup);

}  // namespace convgate::batch
