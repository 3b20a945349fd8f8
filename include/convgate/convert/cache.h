// The content-addressed conversion cache:
//
//   ${CONVGATE_CACHE_DIR:-$HOME/.cache/convgate}/conversions/<key>/{model.onnx,record.json}
//   ${CONVGATE_CACHE_DIR:-$HOME/.cache/convgate}/conversions/.tmp/   work and staging directories
//
// <key> is a sha256 over what decides the output (convert.cc). An entry appears by renaming a
// complete directory into place, so readers see a whole entry or none; record.json holds the
// model file's sha256, checked on every hit. The modification time of record.json is the
// entry's last use (touched on every hit), which pruning orders by.
//
// An entry in use is locked: whoever reads an entry's model (verify comparing it, convert copying
// it to -o) holds a shared flock on the entry's folder, taken before the entry is verified, and
// pruning takes an exclusive one without waiting, skipping (and reporting) entries it cannot
// lock. The kernel drops a lock when its process ends, however it ends.
//
// Thread safety: a ConversionCache holds only its root; several processes may use one cache at
// once (publishing and discarding are renames; a lost publishing race keeps the first entry).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::convert {

// ${CONVGATE_CACHE_DIR}, else $HOME/.cache/convgate. FailedPrecondition when neither is set.
Result<std::filesystem::path> DefaultCacheDir();

// What record.json says about an entry (written by Publish, read by Lookup and List).
struct CachedConversion {
  std::string key;
  std::string kind;
  std::string tool;
  std::string tool_version;
  std::string converter;
  std::map<std::string, std::string> params;
  std::string source_path;
  std::string source_sha256;
  // "model.onnx" (or model<ext> for other output formats: "model.xml" for an OpenVINO IR, whose
  // model.bin lies beside it; "model" for a folder such as a Hugging Face export).
  std::string model_file;
  std::string model_sha256;  // of the file; of the IR's two files or the folder's files together
  int64_t model_bytes = 0;
  int64_t created_unix = 0;        // seconds since the epoch
  std::vector<std::string> notes;  // what the converter reported (fp16 range problems, ...)
};

struct CacheEntry {
  std::filesystem::path dir;
  CachedConversion record;  // key is always set (from the directory name), the rest if readable
  bool readable = false;    // record.json parsed
  int64_t bytes = 0;        // every file of the entry
  int64_t last_used_unix = 0;
};

// Pruning: while the entries take more than max_bytes, remove the least recently used, but never
// one used less than min_age_seconds ago (another job may be about to read it).
struct PruneOptions {
  // Default 10 GiB: room for a few dozen converted models of a few hundred MB each.
  int64_t max_bytes = int64_t{10} << 30;
  // Default one day: longer than any pipeline run that converts and then verifies.
  int64_t min_age_seconds = 24 * 3600;
  bool dry_run = false;
};

// The defaults above overridden by the environment: CONVGATE_CACHE_MAX_BYTES (bytes, or with a
// K/M/G/T suffix, powers of 1024) and CONVGATE_CACHE_MIN_AGE_SECONDS (seconds, or with an
// s/m/h/d suffix); when those are unset, the reference pipeline's CACHE_CLEANUP_THRESHOLD (GB)
// and CACHE_CLEANUP_MIN_AGE_DAYS (days). InvalidArgument naming the variable and its value.
Result<PruneOptions> PruneOptionsFromEnv();

struct PruneResult {
  std::vector<CacheEntry> removed;  // or, with dry_run, what would be removed
  // Entries it would have removed but did not because another process holds them (in use).
  std::vector<CacheEntry> in_use;
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
  int64_t entries_before = 0;
  // Entries not removed only because they are younger than min_age_seconds while the cache is
  // still over max_bytes.
  int64_t kept_too_young = 0;
  int64_t stale_work_dirs_removed = 0;  // left behind by processes that no longer exist
};

enum class LookupState { kMiss, kHit, kCorrupt };

// A shared lock on an entry's folder (flock LOCK_SH), held while its files are in use; prune
// skips entries so held. Released by the destructor (or when the process ends).
class EntryLock {
 public:
  explicit EntryLock(int fd) : fd_(fd) {}
  ~EntryLock();
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  int fd_;
};

struct CacheLookup {
  LookupState state = LookupState::kMiss;
  CachedConversion record;
  std::filesystem::path model_path;
  std::string problem;  // kCorrupt: what failed verification (the entry has been discarded)
  std::shared_ptr<EntryLock> lock;  // kHit: the entry stays as verified while this is held
};

class ConversionCache {
 public:
  // `root` is the cache directory (DefaultCacheDir()); entries live under root/conversions.
  explicit ConversionCache(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path EntriesDir() const;

  // Creates the cache's folders; Unavailable "cannot create the cache directory ..." (a file in
  // the way, a read-only file system, no permission). Conversions then run without the cache.
  Status Create() const;

  // Bytes available to an unprivileged writer on the cache's file system (statvfs f_bavail);
  // Unavailable when the file system cannot say.
  Result<int64_t> FreeBytes() const;

  // kHit after locking the entry (CacheLookup::lock) and verifying the model file's sha256
  // against record.json (and touching the entry's last use); kCorrupt when verification failed,
  // after discarding the entry; kMiss otherwise (an entry pruned while this waited for its lock
  // included).
  Result<CacheLookup> Lookup(const std::string& key) const;

  // A shared lock on `dir`: an entry, or a work directory about to be published (the lock moves
  // with the folder, so the new entry is held from the moment it appears). NotFound when `dir`
  // does not exist, or no longer is what was opened (pruned meanwhile).
  Result<std::shared_ptr<EntryLock>> LockShared(const std::filesystem::path& dir) const;

  // A new empty private directory for producing an entry (same file system as the entries).
  Result<std::filesystem::path> NewWorkDir(const std::string& key) const;

  // Writes record.json into `work_dir` (which holds record.model_file) and renames the directory
  // to the entry for record.key. If another process published that key first, `work_dir` is
  // removed and the existing entry kept. Returns the entry's model path.
  Result<std::filesystem::path> Publish(const std::filesystem::path& work_dir,
                                        const CachedConversion& record) const;

  // Removes a directory atomically from readers' view (renamed into .tmp, then deleted).
  Status Discard(const std::filesystem::path& dir) const;

  // Every entry, most recently used first. An empty or absent cache is an empty list.
  Result<std::vector<CacheEntry>> List() const;

  // Removes the work directories of processes of this host that no longer exist (a conversion
  // killed outright leaves its own behind). Returns how many were removed.
  int64_t RemoveStaleWorkDirs() const;

  // Removes least recently used entries per `options` (see PruneOptions), never `protect_key`
  // nor an entry another process holds (PruneResult::in_use), and work directories of processes
  // that no longer exist.
  Result<PruneResult> Prune(const PruneOptions& options, const std::string& protect_key = "") const;

 private:
  // Discard (with `dry_run`, only the check), unless another process holds the entry: then
  // false and the entry stays.
  Result<bool> DiscardUnlessInUse(const std::filesystem::path& dir, bool dry_run) const;

  std::filesystem::path root_;
};

}  // namespace convgate::convert
