// The fuzz input as a file, for readers that take a path (ReadNpz, SniffFile, ReadZipMember): an
// anonymous memfd, named by its /proc/self/fd link, so no input ever touches the disk and nothing
// is left behind when a run is killed.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace convgate::fuzz {

class MemoryFile {
 public:
  // Aborts when the kernel has no memfd_create (Linux before 3.17): every run would be vacuous.
  explicit MemoryFile(std::string_view bytes) : fd_(::memfd_create("fuzz_input", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  int fd_;
  std::filesystem::path path_;
};

}  // namespace convgate::fuzz
