#include "convgate/core/scratch_file.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace convgate {
namespace {

// Appends all of `source`'s bytes to `fd` (sendfile, in the kernel; unlike copy_file_range it
// works across file systems, e.g. a model on disk and $TMPDIR on tmpfs).
Status AppendFileBytes(int fd, const std::filesystem::path& source,
                       const std::filesystem::path& target) {
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    return Status::Unavailable("cannot open " + source.string() + ": " + std::strerror(errno));
  }
  Status status;
  while (true) {
    const ssize_t copied = ::sendfile(fd, in, nullptr, size_t{1} << 30);
    if (copied > 0) continue;
    if (copied < 0 && errno == EINTR) continue;
    if (copied < 0) {
      status = Status::Unavailable("cannot copy " + source.string() + " to " + target.string() +
                                   ": " + std::strerror(errno));
    }
    break;
  }
  ::close(in);
  return status;
}

}  // namespace

Status WriteScratchFile(const std::filesystem::path& path, std::string_view contents,
                        const std::filesystem::path& starting_with) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot create " + path.string() + ": " + std::strerror(errno));
  }
  Status status;
  if (!starting_with.empty()) status = AppendFileBytes(fd, starting_with, path);
  for (size_t written = 0; status.ok() && written < contents.size();) {
    const ssize_t count = ::write(fd, contents.data() + written, contents.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) {
      status = Status::Unavailable("cannot write " + path.string() + ": " + std::strerror(errno));
    }
    if (count > 0) written += static_cast<size_t>(count);
  }
  ::close(fd);
  return status;
}

Status LinkScratchFile(const std::filesystem::path& path, const std::filesystem::path& to) {
  if (::link(to.c_str(), path.c_str()) == 0) return Status::OK();
  return Status::Unavailable("cannot link " + path.string() + " to " + to.string() + ": " +
                             std::strerror(errno));
}

}  // namespace convgate
