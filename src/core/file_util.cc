#include "convgate/core/file_util.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "convgate/core/file_hash.h"
#include "convgate/core/units.h"

namespace convgate {
namespace {

Status IoError(const std::filesystem::path& path, std::string_view what, int err) {
  Status status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kUnavailable,
                std::string(what) + " " + path.string() + ": " + std::strerror(err));
  return status;
}

// "a FIFO", "a character device", ... for a file type that is not a regular file.
std::string_view FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Status NotRegularFile(const std::filesystem::path& path, mode_t mode) {
  std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_symlink(path, ec)) {
    const std::filesystem::path target = std::filesystem::canonical(path, ec);
    if (!ec) name += " (a link to " + target.string() + ")";
  }
  return Status::FailedPrecondition(name + " is " + std::string(FileTypeName(mode)) +
                                    ", not a regular file");
}

Status TooLarge(const std::filesystem::path& path, uint64_t size, uint64_t max_bytes,
                std::string_view limit_name) {
  std::string message = path.string() + " is " + FormatBytes(static_cast<int64_t>(size)) +
                        ", over the limit of " + FormatBytes(static_cast<int64_t>(max_bytes));
  if (!limit_name.empty()) message += " (" + std::string(limit_name) + ")";
  return Status::FailedPrecondition(message);
}

// Closes the descriptor on every path out of a function.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

std::string ToHex(const unsigned char* digest, unsigned int size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    hex.push_back(kDigits[digest[i] >> 4]);
    hex.push_back(kDigits[digest[i] & 0xF]);
  }
  return hex;
}

// Names tried before giving up: the first is "<target>.tmp-<pid>", the rest random, so only a
// folder full of planted names could exhaust them.
constexpr int kPendingNameAttempts = 100;

// Six characters of [a-z0-9] from the kernel's random source (the clock if it fails).
std::string RandomSuffix() {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[6] = {};
  if (::getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(bytes))) {
    uint64_t seed =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    for (unsigned char& byte : bytes) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      byte = static_cast<unsigned char>(seed >> 56);
    }
  }
  std::string suffix;
  for (unsigned char byte : bytes) suffix.push_back(kChars[byte % (sizeof(kChars) - 1)]);
  return suffix;
}

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestContextDeleter>;

}  // namespace

InputFile::InputFile(std::filesystem::path path, int fd, uint64_t size, uint64_t max_bytes,
                     std::string limit_name)
    : path_(std::move(path)),
      fd_(fd),
      size_(size),
      max_bytes_(max_bytes),
      limit_name_(std::move(limit_name)) {}

InputFile::InputFile(InputFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      max_bytes_(other.max_bytes_),
      limit_name_(std::move(other.limit_name_)) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    max_bytes_ = other.max_bytes_;
    limit_name_ = std::move(other.limit_name_);
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

int InputFile::Release() { return std::exchange(fd_, -1); }

Result<InputFile> InputFile::Open(const std::filesystem::path& path, uint64_t max_bytes,
                                  std::string_view limit_name) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    const int err = errno;
    struct stat info {};
    // A socket cannot be opened at all (ENXIO): say what it is rather than what open said.
    if (err != ENOENT && ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
      return NotRegularFile(path, info.st_mode);
    }
    return IoError(path, "cannot open", err);
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return IoError(path, "cannot read", errno);
  if (!S_ISREG(info.st_mode)) return NotRegularFile(path, info.st_mode);
  const uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size > max_bytes) return TooLarge(path, size, max_bytes, limit_name);
  // Regular files never block; clearing the flag keeps reads plain should that ever change.
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return InputFile(path, fd.Release(), size, max_bytes, std::string(limit_name));
}

Status InputFile::ReadExactly(std::span<std::byte> dst) {
  size_t done = 0;
  while (done < dst.size()) {
    const ssize_t n = ::read(fd_, dst.data() + done, dst.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path_, "cannot read", errno);
    }
    if (n == 0) {
      return Status::DataLoss(path_.string() + ": ends " + std::to_string(dst.size() - done) +
                              " bytes early (did it change while it was read?)");
    }
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

Result<std::shared_ptr<MappedFile>> InputFile::Map() const {
  if (size_ == 0) return std::make_shared<MappedFile>(nullptr, 0);
  if (size_ > std::numeric_limits<size_t>::max()) {
    return Status::Unavailable(path_.string() + ": too large to map");
  }
  void* data =
      ::mmap(nullptr, static_cast<size_t>(size_), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd_, 0);
  if (data == MAP_FAILED) return IoError(path_, "cannot map", errno);
  return std::make_shared<MappedFile>(static_cast<std::byte*>(data), static_cast<size_t>(size_));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

Result<std::string> InputFile::ReadRest() {
  std::string contents;
  contents.reserve(static_cast<size_t>(size_));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path_, "cannot read", errno);
    }
    if (n == 0) break;
    if (contents.size() + static_cast<size_t>(n) > max_bytes_) {
      return TooLarge(path_, contents.size() + static_cast<size_t>(n), max_bytes_, limit_name_);
    }
    contents.append(buffer, static_cast<size_t>(n));
  }
  return contents;
}

Status CheckRegularFile(const std::filesystem::path& path) {
  return InputFile::Open(path, UINT64_MAX, "").status();
}

Result<std::string> ReadFile(const std::filesystem::path& path, uint64_t max_bytes,
                             std::string_view limit_name) {
  CONVGATE_ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path, max_bytes, limit_name));
  return file.ReadRest();
}

Result<PendingFile> PendingFile::Create(const std::filesystem::path& target) {
  const std::string base = target.string() + ".tmp-" + std::to_string(::getpid());
  std::string name = base;
  for (int attempt = 0; attempt < kPendingNameAttempts; ++attempt) {
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return PendingFile(target, name, fd);
    // Taken: planted by someone else, or left by a crashed process with this pid. Never reused.
    if (errno != EEXIST) return IoError(name, "cannot create", errno);
    name = base + "-" + RandomSuffix();
  }
  return Status::Unavailable("cannot create a temporary file beside " + target.string() + ": " +
                             std::to_string(kPendingNameAttempts) + " names were taken");
}

PendingFile::PendingFile(std::filesystem::path target, std::filesystem::path path, int fd)
    : target_(std::move(target)), path_(std::move(path)), fd_(fd) {}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : target_(std::move(other.target_)), path_(std::move(other.path_)), fd_(other.fd_) {
  other.path_.clear();
  other.fd_ = -1;
}

PendingFile::~PendingFile() {
  CloseFd();
  if (!path_.empty()) ::unlink(path_.c_str());
}

void PendingFile::CloseFd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status PendingFile::Write(std::string_view bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path_, "cannot write", errno);
    }
    written += static_cast<size_t>(n);
  }
  return Status::OK();
}

Status PendingFile::Commit(bool sync) {
  if (fd_ >= 0) {
    if (sync && ::fsync(fd_) != 0) return IoError(path_, "cannot flush", errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return IoError(path_, "cannot flush", errno);
  } else if (sync) {
    CONVGATE_RETURN_IF_ERROR(SyncFile(path_));
  }
  if (::rename(path_.c_str(), target_.c_str()) != 0) {
    return IoError(target_, "cannot rename into place", errno);
  }
  path_.clear();
  return Status::OK();
}

Status WriteFileAtomic(const std::filesystem::path& path, std::string_view contents) {
  CONVGATE_ASSIGN_OR_RETURN(PendingFile file, PendingFile::Create(path));
  CONVGATE_RETURN_IF_ERROR(file.Write(contents));
  return file.Commit();
}

namespace {

// The digest of everything `ctx` was given, in lowercase hex.
std::string FinalHex(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx, digest, &size);
  return ToHex(digest, size);
}

}  // namespace

namespace {

// The sha256 of what `fd` (open on `path`, for messages) holds from its start.
// The digests of large files this process has hashed, by inode and the stat fields any write
// changes (size, mtime and ctime to the nanosecond): one verify hashes its source for the
// conversion cache's key, then for the end-to-end and the comparison reports, and its output for
// the record and again as the target side (resnet18: four passes over 47 MB, 0.8 s of a 2 s
// verify on this machine). A file replaced by rename has another inode; one rewritten in place
// changes its ctime (see Remember for writes within a clock tick).
class DigestMemo {
 public:
  static constexpr off_t kMinBytes = off_t{1} << 20;  // smaller files hash in under 10 ms

  // The digest known for the file as `info` describes it. When a prefetch is hashing that file,
  // waits for it rather than reading the file a second time beside it.
  std::optional<std::string> Find(const struct stat& info) {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::pair<dev_t, ino_t> id{info.st_dev, info.st_ino};
    done_.wait(lock, [&] { return hashing_.count(id) == 0; });
    auto found = digests_.find(id);
    if (found == digests_.end() || !found->second.Matches(info)) return std::nullopt;
    return found->second.digest;
  }
  // Remembers a digest read from a file that `info` describes, hashing having started at
  // `started` (CLOCK_REALTIME). A file changed shortly before is not remembered: file times tick
  // coarsely (a few ms), so a write in the same tick as the one just hashed would leave every
  // stat field as it was (git's "racily clean" entries).
  void Remember(const struct stat& info, const struct timespec& started,
                const std::string& digest) {
    constexpr int64_t kTickNanos = 50'000'000;
    const int64_t changed = int64_t{info.st_ctim.tv_sec} * 1'000'000'000 + info.st_ctim.tv_nsec;
    const int64_t hashed = int64_t{started.tv_sec} * 1'000'000'000 + started.tv_nsec;
    if (changed >= hashed - kTickNanos) return;
    std::lock_guard<std::mutex> lock(mutex_);
    digests_[{info.st_dev, info.st_ino}] = Entry{info.st_size, info.st_mtim, info.st_ctim, digest};
  }
  // A prefetch starts (true) unless the file is known or being hashed already.
  bool StartHashing(const struct stat& info) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::pair<dev_t, ino_t> id{info.st_dev, info.st_ino};
    auto found = digests_.find(id);
    if (found != digests_.end() && found->second.Matches(info)) return false;
    return hashing_.insert(id).second;
  }
  // A forked child (a built-in conversion) has no prefetch threads: what they were hashing will
  // never be remembered there, so it must not wait for it. The lock is held across fork so the
  // child never inherits it locked by a thread it does not have.
  void BeforeFork() { mutex_.lock(); }
  void AfterForkInParent() { mutex_.unlock(); }
  void AfterForkInChild() {
    hashing_.clear();
    mutex_.unlock();
  }
  void DoneHashing(const struct stat& info) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      hashing_.erase({info.st_dev, info.st_ino});
    }
    done_.notify_all();
  }

 private:
  struct Entry {
    off_t size;
    struct timespec mtime, ctime;
    std::string digest;
    bool Matches(const struct stat& info) const {
      return size == info.st_size && Same(mtime, info.st_mtim) && Same(ctime, info.st_ctim);
    }
    static bool Same(const struct timespec& a, const struct timespec& b) {
      return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
    }
  };
  std::mutex mutex_;
  std::condition_variable done_;
  std::map<std::pair<dev_t, ino_t>, Entry> digests_;
  std::set<std::pair<dev_t, ino_t>> hashing_;
};

DigestMemo& Memo() {
  static DigestMemo* memo = [] {
    auto* made = new DigestMemo();
    ::pthread_atfork([] { Memo().BeforeFork(); }, [] { Memo().AfterForkInParent(); },
                     [] { Memo().AfterForkInChild(); });
    return made;
  }();
  return *memo;
}

Result<std::string> Sha256FdUncached(int fd, const std::filesystem::path& path);

Result<std::string> Sha256Fd(int fd, const std::filesystem::path& path) {
  struct stat before;
  const bool memo = ::fstat(fd, &before) == 0 && S_ISREG(before.st_mode) &&
                    before.st_size >= DigestMemo::kMinBytes;
  if (memo) {
    if (std::optional<std::string> known = Memo().Find(before)) return *known;
  }
  struct timespec started;
  ::clock_gettime(CLOCK_REALTIME, &started);
  Result<std::string> digest = Sha256FdUncached(fd, path);
  struct stat after;
  // Remembered only when nothing wrote to the file while it was read.
  if (memo && digest.ok() && ::fstat(fd, &after) == 0 && before.st_size == after.st_size &&
      before.st_ctim.tv_sec == after.st_ctim.tv_sec &&
      before.st_ctim.tv_nsec == after.st_ctim.tv_nsec) {
    Memo().Remember(after, started, *digest);
  }
  return digest;
}

Result<std::string> Sha256FdUncached(int fd, const std::filesystem::path& path) {
  DigestContext ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return Status::Internal("OpenSSL could not initialise sha256");
  }
  // Mapped when it can be: hashing reads the page cache where it lies, with no copy through a
  // buffer (a saved-outputs side is hashed whole for its report). One window at a time, so the
  // mapped pages that count in the process's RSS are never more than one window's: a model is
  // hashed while another thread loads (compare), and a whole mapping added the model's size
  // to that peak (resnet18: 107 -> 165 MiB).
  constexpr size_t kWindowBytes = size_t{8} << 20;  // a multiple of any page size
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    const auto size = static_cast<size_t>(info.st_size);
    bool mapped = true;
    for (size_t offset = 0; offset < size && mapped; offset += kWindowBytes) {
      const size_t length = std::min(kWindowBytes, size - offset);
      void* data = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(offset));
      mapped = data != MAP_FAILED;
      if (!mapped && offset > 0) return IoError(path, "cannot map", errno);
      if (!mapped) break;
      ::madvise(data, length, MADV_SEQUENTIAL);
      EVP_DigestUpdate(ctx.get(), data, length);
      ::munmap(data, length);
    }
    if (mapped) return FinalHex(ctx.get());
  }
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path, "cannot read", errno);
    }
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buffer, static_cast<size_t>(n));
  }
  return FinalHex(ctx.get());
}

}  // namespace

Result<std::string> Sha256File(const std::filesystem::path& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return IoError(path, "cannot open", errno);
  return Sha256Fd(fd.get(), path);
}

void PrefetchSha256(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // Sha256File will say why, if anyone asks
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < DigestMemo::kMinBytes ||
      !Memo().StartHashing(info)) {
    ::close(fd);
    return;
  }
  // Detached: a process that ends first does not wait for a digest nobody asked for.
  struct timespec started;
  ::clock_gettime(CLOCK_REALTIME, &started);
  std::thread([fd, info, started, path] {
    FileDescriptor owned(fd);
    Result<std::string> digest = Sha256FdUncached(fd, path);
    struct stat after;
    if (digest.ok() && ::fstat(fd, &after) == 0 && after.st_size == info.st_size &&
        after.st_ctim.tv_sec == info.st_ctim.tv_sec &&
        after.st_ctim.tv_nsec == info.st_ctim.tv_nsec) {
      Memo().Remember(info, started, *digest);
    }
    Memo().DoneHashing(info);
  }).detach();
}

Result<std::string> Sha256UserFile(const std::filesystem::path& path, uint64_t max_bytes,
                                   std::string_view limit_name) {
  CONVGATE_ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path, max_bytes, limit_name));
  return Sha256Fd(file.fd(), path);
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  return ToHex(digest, size);
}

Status SyncFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return Status::Unavailable("cannot flush " + path.string() + ": " + std::strerror(err));
  }
  ::close(fd);
  return Status::OK();
}

}  // namespace convgate
