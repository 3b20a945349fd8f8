// The cache's entries: lookup with verification, atomic publishing, discarding.
#include "convgate/convert/cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "convert/cache_internal.h"
#include "convert/output.h"
#include "convgate/core/file_util.h"

namespace convgate::convert {
namespace {

Status CreateDirectories(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return Status::Unavailable("cannot create the cache directory " + dir.string() + ": " +
                               error.message());
  }
  return Status::OK();
}

// The model's bytes must be on disk before the entry that vouches for them becomes visible.
// A model file name from record.json must stay inside its entry.
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

std::string Verify(const std::filesystem::path& dir, const std::string& key,
                   CachedConversion* record) {
  Result<CachedConversion> read = ReadRecord(dir);
  if (!read.ok()) return read.status().message();
  *record = std::move(read).value();
  if (record->key != key) return "record.json is for key " + record->key;
  if (!IsPlainFileName(record->model_file)) {
    return "record.json names the model file '" + record->model_file + "'";
  }
  // A FIFO planted in the cache would block the hash forever. A folder output (a Hugging Face
  // export) is hashed file by file, an IR with its .bin (output.h's DigestOutput).
  std::error_code error;
  if (!std::filesystem::is_directory(dir / record->model_file, error)) {
    if (Status regular = CheckRegularFile(dir / record->model_file); !regular.ok()) {
      return regular.message();
    }
  }
  Result<std::string> sha = DigestOutput(dir / record->model_file);
  if (!sha.ok()) return sha.status().message();
  if (*sha != record->model_sha256) {
    return record->model_file + " has sha256 " + *sha + " but record.json says " +
           record->model_sha256;
  }
  return "";
}

// Opens the folder `dir` and flocks it with `operation` (LOCK_SH; LOCK_EX | LOCK_NB). The
// descriptor, or -1 with errno set.
int OpenLocked(const std::filesystem::path& dir, int operation) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// True while `dir` still names the folder open at `fd`. Discarding renames an entry away before
// deleting it, so a lock that was granted only after that protects nothing.
bool StillAt(int fd, const std::filesystem::path& dir) {
  struct stat opened {
  }, named{};
  return ::fstat(fd, &opened) == 0 && ::stat(dir.c_str(), &named) == 0 &&
         opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

Status SyncOutput(const std::filesystem::path& out) {
  std::error_code error;
  if (!std::filesystem::is_directory(out, error)) {
    const std::filesystem::path bin = IrWeightsPath(out);
    if (out.extension() == ".xml" && std::filesystem::is_regular_file(bin, error)) {
      CONVGATE_RETURN_IF_ERROR(SyncFile(bin));
    }
    return SyncFile(out);
  }
  auto it = std::filesystem::recursive_directory_iterator(out, error);
  for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    std::error_code file_error;
    if (it->is_regular_file(file_error)) CONVGATE_RETURN_IF_ERROR(SyncFile(it->path()));
  }
  return Status::OK();
}

}  // namespace

EntryLock::~EntryLock() {
  if (fd_ >= 0) ::close(fd_);
}

ConversionCache::ConversionCache(std::filesystem::path root) : root_(std::move(root)) {}

std::filesystem::path ConversionCache::EntriesDir() const { return root_ / "conversions"; }

Status ConversionCache::Create() const { return CreateDirectories(EntriesDir()); }

Result<int64_t> ConversionCache::FreeBytes() const {
  struct statvfs stats {};
  if (::statvfs(root_.c_str(), &stats) != 0) {
    return Status::Unavailable("cannot read the free space of " + root_.string() + ": " +
                               std::strerror(errno));
  }
  return static_cast<int64_t>(stats.f_bavail) * static_cast<int64_t>(stats.f_frsize);
}

Result<std::shared_ptr<EntryLock>> ConversionCache::LockShared(
    const std::filesystem::path& dir) const {
  const int fd = OpenLocked(dir, LOCK_SH);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(dir.string() + ": no such cache entry");
    return Status::Unavailable("cannot lock " + dir.string() + ": " + std::strerror(errno));
  }
  auto lock = std::make_shared<EntryLock>(fd);
  if (!StillAt(fd, dir)) {
    return Status::NotFound(dir.string() + " was removed while waiting for its lock");
  }
  return lock;
}

Result<CacheLookup> ConversionCache::Lookup(const std::string& key) const {
  CacheLookup lookup;
  const std::filesystem::path dir = EntriesDir() / key;
  // Locked before verifying, so what is verified is what the caller uses: a prune skips it.
  Result<std::shared_ptr<EntryLock>> lock = LockShared(dir);
  if (!lock.ok()) {
    if (lock.status().code() == StatusCode::kNotFound) return lookup;
    return lock.status();
  }
  lookup.problem = Verify(dir, key, &lookup.record);
  if (!lookup.problem.empty()) {
    lookup.state = LookupState::kCorrupt;
    lock->reset();
    CONVGATE_RETURN_IF_ERROR(Discard(dir));
    return lookup;
  }
  lookup.lock = std::move(lock).value();
  lookup.state = LookupState::kHit;
  lookup.model_path = dir / lookup.record.model_file;
  // The record's modification time is the entry's last use, which pruning orders by.
  ::utimensat(AT_FDCWD, (dir / kRecordFile).c_str(), nullptr, 0);
  return lookup;
}

Result<std::filesystem::path> ConversionCache::NewWorkDir(const std::string& key) const {
  const std::filesystem::path parent = EntriesDir() / kWorkDirName;
  CONVGATE_RETURN_IF_ERROR(CreateDirectories(parent));
  const std::filesystem::path dir = parent / WorkDirName(key);
  if (::mkdir(dir.c_str(), 0755) != 0) {
    return Status::Unavailable("cannot create " + dir.string() + ": " + std::strerror(errno));
  }
  return dir;
}

Result<std::filesystem::path> ConversionCache::Publish(const std::filesystem::path& work_dir,
                                                       const CachedConversion& record) const {
  // A folder's files are flushed one by one (SyncFile on each); an IR's .bin too.
  CONVGATE_RETURN_IF_ERROR(SyncOutput(work_dir / record.model_file));
  CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(work_dir / kRecordFile, RecordToJson(record)));
  const std::filesystem::path target = EntriesDir() / record.key;
  if (::rename(work_dir.c_str(), target.c_str()) != 0) {
    const int err = errno;
    if (err != ENOTEMPTY && err != EEXIST) {
      return Status::Unavailable("cannot publish cache entry " + target.string() + ": " +
                                 std::strerror(err));
    }
    // Another process published the same key first: theirs stays, ours goes.
    CONVGATE_RETURN_IF_ERROR(Discard(work_dir));
  }
  return target / record.model_file;
}

Status ConversionCache::Discard(const std::filesystem::path& dir) const {
  const std::filesystem::path parent = EntriesDir() / kWorkDirName;
  CONVGATE_RETURN_IF_ERROR(CreateDirectories(parent));
  const std::filesystem::path trash = parent / WorkDirName("discard");
  // The rename takes the entry out of readers' view at once; deleting can then take its time.
  if (::rename(dir.c_str(), trash.c_str()) != 0) {
    if (errno == ENOENT) return Status::OK();  // someone else discarded it
    return Status::Unavailable("cannot remove cache entry " + dir.string() + ": " +
                               std::strerror(errno));
  }
  std::error_code error;
  std::filesystem::remove_all(trash, error);
  if (error) {
    return Status::Unavailable("cannot delete " + trash.string() + ": " + error.message());
  }
  return Status::OK();
}

Result<bool> ConversionCache::DiscardUnlessInUse(const std::filesystem::path& dir,
                                                 bool dry_run) const {
  const int fd = OpenLocked(dir, LOCK_EX | LOCK_NB);
  if (fd < 0) {
    if (errno == EWOULDBLOCK) return false;
    if (errno == ENOENT) return true;  // someone else discarded it
    return Status::Unavailable("cannot lock cache entry " + dir.string() + ": " +
                               std::strerror(errno));
  }
  // Renamed and deleted while locked, so nobody can lock it in between and use it.
  EntryLock held(fd);
  if (dry_run || !StillAt(fd, dir)) return true;
  CONVGATE_RETURN_IF_ERROR(Discard(dir));
  return true;
}

}  // namespace convgate::convert
