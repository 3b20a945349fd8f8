// Whole-file reads, atomic writes and content hashes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// Reads the whole file. Errors name the path and strerror.
Result<std::string> ReadFile(const std::filesystem::path& path);

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
  // fsyncs the file, then renames it over the target.
  Status Commit();

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

// Lower-case hex sha256 of a file's contents, streamed (constant memory).
Result<std::string> Sha256File(const std::filesystem::path& path);
// Lower-case hex sha256 of bytes.
std::string Sha256Hex(std::string_view bytes);

}  // namespace convgate
