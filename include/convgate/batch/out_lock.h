// A batch's claim on its output folder: one process per (folder, shard) at a time.
//
// Two runs of one manifest into one folder at once would each record every entry (the resume
// check happens before either has recorded anything) and rewrite each other's job folders. The
// second run fails at once instead, naming the folder. Shards of one manifest (--shard, the
// tasks of a Slurm array) take different entries, so each shard has its own lock and they share
// the folder as before. The lock is an flock on OUT/.convgate-batch-<I>-of-<N>.lock, released
// by the kernel when the process ends however it ends; the file stays (it is empty).
#pragma once

#include <filesystem>

#include "convgate/core/status.h"

namespace convgate::batch {

class OutLock {
 public:
  // FailedPrecondition naming `out` when another process holds the lock; Unavailable when the
  // lock file cannot be opened (a link planted in its place is not followed).
  static Result<OutLock> Acquire(const std::filesystem::path& out, int shard_index,
                                 int shard_count);
  OutLock(OutLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OutLock& operator=(OutLock&&) = delete;
  OutLock(const OutLock&) = delete;
  ~OutLock();

 private:
  explicit OutLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace convgate::batch
