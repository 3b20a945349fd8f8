#include "convgate/core/temp_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include "convgate/core/interrupt.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "convgate-";
// A folder whose lock is free but whose pid runs again (reused) is stale once it is this old: its
// owner locks it right after creating it.
constexpr int64_t kReusedPidAgeSeconds = 60;

// The pid in "convgate-<pid>-<purpose>-XXXXXX", or 0 when `name` is not such a folder's.
pid_t OwnerPid(std::string_view name) {
  if (!name.starts_with(kPrefix)) return 0;
  name.remove_prefix(kPrefix.size());
  const size_t dash = name.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash > 9) return 0;
  pid_t pid = 0;
  for (char c : name.substr(0, dash)) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

bool ProcessIsGone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// Removes `dir` when its owner is gone, holding the owner's lock meanwhile so that two sweeping
// processes do not race.
bool RemoveIfStale(const fs::path& dir, pid_t pid) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  bool removed = false;
  struct stat info {};
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &info) == 0) {
    const bool old = std::time(nullptr) - info.st_ctime > kReusedPidAgeSeconds;
    if (ProcessIsGone(pid) || old) {
      std::error_code error;
      fs::remove_all(dir, error);
      removed = !error;
    }
  }
  ::close(fd);
  return removed;
}

}  // namespace

fs::path TempRoot() {
  std::error_code error;
  fs::path root = fs::temp_directory_path(error);
  return error ? fs::path("/tmp") : root;
}

Result<TempDir> TempDir::Create(std::string_view purpose, const fs::path& root) {
  std::string pattern = (root / (std::string(kPrefix) + std::to_string(::getpid()) + "-" +
                                 std::string(purpose) + "-XXXXXX"))
                            .string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::Unavailable("cannot create a temporary folder " + pattern + ": " +
                               std::strerror(errno));
  }
  const int fd = ::open(pattern.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    std::error_code ignored;
    fs::remove_all(pattern, ignored);
    return Status::Unavailable("cannot lock the temporary folder " + pattern + ": " +
                               std::strerror(err));
  }
  RegisterTempPath(pattern);
  return TempDir(pattern, fd);
}

TempDir::TempDir(fs::path path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}

TempDir::TempDir(TempDir&& other) noexcept
    : path_(std::move(other.path_)), lock_fd_(other.lock_fd_) {
  other.path_.clear();
  other.lock_fd_ = -1;
}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::move(other.path_);
    lock_fd_ = other.lock_fd_;
    other.path_.clear();
    other.lock_fd_ = -1;
  }
  return *this;
}

TempDir::~TempDir() { Remove(); }

void TempDir::Remove() {
  if (!path_.empty()) {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
    UnregisterTempPath(path_);
    path_.clear();
  }
  // Released after the removal, so no sweeper can find the folder unlocked while it exists.
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

int SweepStaleTempDirs(const fs::path& root) {
  int removed = 0;
  std::error_code error;
  for (auto it = fs::directory_iterator(root, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    const pid_t pid = OwnerPid(it->path().filename().string());
    std::error_code type_error;
    // A live owner, this process included, holds the lock; a symlink is nobody's folder.
    if (pid <= 0 || it->symlink_status(type_error).type() != fs::file_type::directory) continue;
    if (RemoveIfStale(it->path(), pid)) ++removed;
  }
  return removed;
}

}  // namespace convgate
