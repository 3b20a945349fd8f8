// Whole-file reads, atomic writes and content hashes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// The largest file read whole unless the caller says otherwise: protobuf cannot parse a message
// over 2 GiB, so no ONNX model or TensorProto convgate could use is larger.
inline constexpr uint64_t kMaxWholeFileBytes = uint64_t{2} << 30;
// JSON and YAML files (reports, policies, cache records): a report.json of thousands of samples
// takes a few MiB, so 256 MiB is generous and still refuses a file that is no such document.
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{256} << 20;

class MappedFile;

// A file opened for reading by a reader of paths a user gave. Only regular files are read (after
// symlinks are resolved): a FIFO would block forever, /dev/zero and /dev/urandom never end, and
// neither has a size to check. The size is checked against the caller's limit before anything is
// read. Move-only; the descriptor is closed when this goes away.
class InputFile {
 public:
  // NotFound for a missing path. FailedPrecondition, naming the path, for anything but a regular
  // file ("x.onnx is a FIFO, not a regular file"; a symlink names its target too) and for a file
  // larger than `max_bytes` ("x.npy is 5.0 GiB, over the limit of 1.0 GiB (--max-tensor-bytes)",
  // `limit_name` in the parentheses). Unavailable with strerror for other failures. Never blocks:
  // the file is opened O_NONBLOCK and refused by fstat before a FIFO could be read.
  static Result<InputFile> Open(const std::filesystem::path& path, uint64_t max_bytes,
                                std::string_view limit_name);

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  const std::filesystem::path& path() const { return path_; }
  // Bytes when opened.
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }
  // Gives up ownership of the descriptor (to a library that closes it, e.g. zip_fdopen).
  int Release();

  // Reads exactly dst.size() bytes from the current offset. DataLoss naming the path when the
  // file ends first (it shrank since it was opened).
  Status ReadExactly(std::span<std::byte> dst);
  // Everything from the current offset to the end. FailedPrecondition when that turns out more
  // than the limit (the file grew while it was read); files whose size the kernel does not report
  // (/proc) are read to their end all the same.
  Result<std::string> ReadRest();

  // The whole file (its size when opened) mapped copy-on-write, so readers can adopt its bytes as
  // tensors instead of copying them (core/tensor.h Tensor::Adopt); writes to them stay private to
  // this process. The mapping outlives this InputFile and is unmapped with the last reference.
  // Unavailable naming the path when mmap fails. Caveat of every mapped reader (numpy's
  // mmap_mode too): a file truncated by another process while mapped faults on access; convgate's
  // own writers replace files by rename, which leaves a mapped file intact.
  Result<std::shared_ptr<MappedFile>> Map() const;

 private:
  InputFile(std::filesystem::path path, int fd, uint64_t size, uint64_t max_bytes,
            std::string limit_name);

  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t max_bytes_ = 0;
  std::string limit_name_;
};

// A file's bytes mapped into memory (InputFile::Map). Empty for an empty file.
class MappedFile {
 public:
  MappedFile(std::byte* data, size_t size) : data_(data), size_(size) {}
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Writable because the mapping is private: adopted tensors may be written (copy-on-write).
  std::span<std::byte> bytes() const { return {data_, size_}; }

 private:
  std::byte* data_;
  size_t size_;
};

// OK when `path` is a regular file or a symlink to one; otherwise InputFile::Open's errors. For
// paths handed to a library that opens them itself (libtorch, a converter).
Status CheckRegularFile(const std::filesystem::path& path);

// Reads the whole file through InputFile (regular files only, at most `max_bytes`). Errors name
// the path and strerror.
Result<std::string> ReadFile(const std::filesystem::path& path,
                             uint64_t max_bytes = kMaxWholeFileBytes,
                             std::string_view limit_name = "protobuf cannot parse more");

// A file written in place of `target`, then renamed over it, so a crash or a full disk never
// leaves a half-written file where a complete one was expected. The file is new: created
// beside `target` as "<target>.tmp-<pid>", or "<target>.tmp-<pid>-<random>" when that name is
// taken, always with O_CREAT | O_EXCL | O_NOFOLLOW (mode 0644 before the umask). So a file or
// symlink someone planted at a name they guessed (in a shared --out folder) is never opened, let
// alone written through; and the rename replaces a symlink at `target` itself, not its target.
// Removed by the destructor unless committed.
class PendingFile {
 public:
  // Unavailable (NotFound when the folder is missing) naming the path and strerror.
  static Result<PendingFile> Create(const std::filesystem::path& target);

  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&&) = delete;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile();

  // Where to write: the descriptor (open for writing), or the path for a writer that opens it
  // itself (libzip writes a file of its own and renames it over this one).
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& target() const { return target_; }
  // Writes all of `bytes` at the descriptor's position. Errors name the file.
  Status Write(std::string_view bytes);
  // Closes the descriptor early, for writers that open the path themselves.
  void CloseFd();
  // fsyncs the file (unless !sync: a scratch file read back by this process, which a crash makes
  // worthless anyway), then renames it over the target.
  Status Commit(bool sync = true);

 private:
  PendingFile(std::filesystem::path target, std::filesystem::path path, int fd);

  std::filesystem::path target_;
  std::filesystem::path path_;  // empty once committed or moved from
  int fd_ = -1;
};

// Writes `contents` to `path` through a PendingFile.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view contents);

// fsyncs a file written by someone else (libzip, a converter, a copy) before it is renamed into
// place, so a crash cannot publish it half-written. Unavailable naming the path and strerror.
Status SyncFile(const std::filesystem::path& path);

// Lower-case hex sha256 of a file's contents, streamed (constant memory). A file of 1 MiB or more
// is hashed once per process: its digest is remembered with its inode, size, mtime and ctime, and
// given again while they are unchanged.
Result<std::string> Sha256File(const std::filesystem::path& path);
// Starts hashing a file of 1 MiB or more on a thread of its own, so that a later Sha256File of it
// (which waits for the thread) finds the digest ready: a large model is hashed while other work
// (loading it, checking flags) runs on the other core. Does nothing for a smaller, unreadable or
// already hashed file.
void PrefetchSha256(const std::filesystem::path& path);
// Lower-case hex sha256 of bytes.
std::string Sha256Hex(std::string_view bytes);

}  // namespace convgate
