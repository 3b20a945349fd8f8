// Private temporary folders that do not outlive convgate, however it ends.
//
// A TempDir is created under $TMPDIR (else /tmp) as convgate-<pid>-<purpose>-XXXXXX (mode 0700,
// mkdtemp) and removed with its contents when its owner destroys it. An interrupt that cannot
// wait for the owner removes it too (interrupt.h). Only a process killed outright (SIGKILL, a
// crash, a power cut) leaves it behind; for that case the owner holds an exclusive flock on the
// folder for as long as it exists, which the kernel drops when the process dies however it dies,
// and SweepStaleTempDirs (every CLI run, at start) removes the folders nobody holds.
//
// Thread safety: a TempDir is owned by one thread at a time; Sweep may run anywhere.
#pragma once

#include <filesystem>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// $TMPDIR when it is set and absolute, else /tmp (std::filesystem::temp_directory_path()).
std::filesystem::path TempRoot();

class TempDir {
 public:
  // A new folder under `root` (default: TempRoot()); `purpose` ("exec", "convert") is part of its
  // name, for a reader of /tmp. Unavailable naming the pattern and strerror.
  static Result<TempDir> Create(std::string_view purpose,
                                const std::filesystem::path& root = TempRoot());

  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  TempDir(std::filesystem::path path, int lock_fd);
  void Remove();

  std::filesystem::path path_;
  int lock_fd_ = -1;
};

// Removes the folders under `root` named like a TempDir whose owner is gone: nobody holds their
// lock, and the pid in the name is not running (or, that pid having been reused, the folder is
// over a minute old; a live owner takes its lock within microseconds of creating the folder).
// Anything else there is left alone. Returns how many were removed.
int SweepStaleTempDirs(const std::filesystem::path& root = TempRoot());

}  // namespace convgate
