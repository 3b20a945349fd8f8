#include "convgate/batch/out_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace convgate::batch {

Result<OutLock> OutLock::Acquire(const std::filesystem::path& out, int shard_index,
                                 int shard_count) {
  const std::filesystem::path path = out / (".convgate-batch-" + std::to_string(shard_index) +
                                            "-of-" + std::to_string(shard_count) + ".lock");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::Unavailable("cannot open the batch's lock " + path.string() + ": " +
                               std::strerror(errno));
  }
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return Status::FailedPrecondition(
          out.string() + " is in use by another convgate batch of " +
          (shard_count > 1
               ? "shard " + std::to_string(shard_index) + "/" + std::to_string(shard_count) + " of "
               : std::string()) +
          "a manifest (it holds " + path.filename().string() +
          "): wait for it to end, or give another --out");
    }
    return Status::Unavailable("cannot lock " + path.string() + ": " + std::strerror(error));
  }
  return OutLock(fd);
}

OutLock::~OutLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace convgate::batch
