// Listing the cache and pruning it by size and age.
#include <sys/stat.h>

#include <algorithm>

#include "convert/cache_internal.h"
#include "convgate/convert/cache.h"

namespace convgate::convert {
namespace {

int64_t DirectoryBytes(const std::filesystem::path& dir) {
  int64_t bytes = 0;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    std::error_code size_error;
    if (it->is_regular_file(size_error)) {
      const auto size = it->file_size(size_error);
      if (!size_error) bytes += static_cast<int64_t>(size);
    }
  }
  return bytes;
}

CacheEntry ReadEntry(const std::filesystem::path& dir) {
  CacheEntry entry;
  entry.dir = dir;
  Result<CachedConversion> record = ReadRecord(dir);
  entry.readable = record.ok();
  if (record.ok()) entry.record = std::move(record).value();
  entry.record.key = dir.filename().string();
  entry.bytes = DirectoryBytes(dir);
  entry.last_used_unix = ModifiedUnix(dir / kRecordFile);
  if (entry.last_used_unix == 0) entry.last_used_unix = ModifiedUnix(dir);
  return entry;
}

int64_t RemoveStaleWorkDirsIn(const std::filesystem::path& parent, bool dry_run) {
  int64_t removed = 0;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(parent, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (!IsStaleWorkDir(it->path().filename().string())) continue;
    std::error_code remove_error;
    if (!dry_run) std::filesystem::remove_all(it->path(), remove_error);
    if (!remove_error) ++removed;
  }
  return removed;
}

}  // namespace

int64_t ConversionCache::RemoveStaleWorkDirs() const {
  return RemoveStaleWorkDirsIn(EntriesDir() / kWorkDirName, false);
}

Result<std::vector<CacheEntry>> ConversionCache::List() const {
  std::vector<CacheEntry> entries;
  std::error_code error;
  if (!std::filesystem::exists(EntriesDir(), error)) return entries;
  auto it = std::filesystem::directory_iterator(EntriesDir(), error);
  for (; !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code type_error;
    if (name.empty() || name[0] == '.' || !it->is_directory(type_error)) continue;
    entries.push_back(ReadEntry(it->path()));
  }
  if (error) {
    return Status::Unavailable("cannot list the cache " + EntriesDir().string() + ": " +
                               error.message());
  }
  std::sort(entries.begin(), entries.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_used_unix != b.last_used_unix ? a.last_used_unix > b.last_used_unix
                                                : a.record.key < b.record.key;
  });
  return entries;
}

Result<PruneResult> ConversionCache::Prune(const PruneOptions& options,
                                           const std::string& protect_key) const {
  CONVGATE_ASSIGN_OR_RETURN(std::vector<CacheEntry> entries, List());
  PruneResult result;
  result.entries_before = static_cast<int64_t>(entries.size());
  for (const CacheEntry& entry : entries) result.bytes_before += entry.bytes;
  result.stale_work_dirs_removed =
      RemoveStaleWorkDirsIn(EntriesDir() / kWorkDirName, options.dry_run);
  int64_t total = result.bytes_before;
  const int64_t now = NowUnix();
  // Least recently used first.
  for (auto it = entries.rbegin(); it != entries.rend() && total > options.max_bytes; ++it) {
    if (it->record.key == protect_key) continue;
    if (now - it->last_used_unix < options.min_age_seconds) {
      ++result.kept_too_young;
      continue;
    }
    CONVGATE_ASSIGN_OR_RETURN(bool discarded, DiscardUnlessInUse(it->dir, options.dry_run));
    if (!discarded) {
      result.in_use.push_back(*it);
      continue;
    }
    total -= it->bytes;
    result.removed.push_back(*it);
  }
  result.bytes_after = total;
  return result;
}

}  // namespace convgate::convert
