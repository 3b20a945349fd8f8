#include "convgate/core/limits.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

namespace convgate {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;
// Below this a default would refuse ordinary models; a machine that small is told by its errors.
constexpr int64_t kMinDefault = 64 * kMiB;
// When the machine does not say how much memory it has.
constexpr int64_t kUnknownDefault = kGiB;
// cgroup v1 writes "no limit" as the largest page-aligned int64 (9223372036854771712); anything
// at or above 2^62 is treated as no limit.
constexpr int64_t kNoLimit = int64_t{1} << 62;

// The first line of a small kernel file; empty when it cannot be read.
std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// A limit file's value in bytes; 0 for "max", a missing file or anything else unreadable.
int64_t LimitIn(const std::string& path) {
  const std::string text = FirstLine(path);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value <= 0 || value >= kNoLimit) return 0;
  return value;
}

int64_t MinKnown(int64_t a, int64_t b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

// The smallest memory limit of the cgroup `relative` (as /proc/self/cgroup names it) and its
// ancestors under `root`, reading `file` in each.
int64_t CgroupLimit(const std::string& root, std::string relative, const std::string& file) {
  int64_t limit = 0;
  while (true) {
    limit = MinKnown(limit, LimitIn(root + relative + "/" + file));
    if (relative.empty() || relative == "/") return limit;
    const size_t slash = relative.rfind('/');
    relative = slash == std::string::npos ? "" : relative.substr(0, slash);
  }
}

// /proc/self/cgroup lines are "ID:CONTROLLERS:PATH": "0::/user.slice" for cgroup v2, and
// "4:memory:/docker/abc" for the v1 memory controller.
int64_t CgroupMemoryLimit() {
  std::ifstream in("/proc/self/cgroup");
  int64_t limit = 0;
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      limit = MinKnown(limit, CgroupLimit("/sys/fs/cgroup", path, "memory.max"));
    } else if (controllers == "memory" || controllers.find("memory,") != std::string::npos ||
               controllers.ends_with(",memory")) {
      limit = MinKnown(limit, CgroupLimit("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes"));
    }
  }
  return limit;
}

int64_t ResourceLimit(int resource) {
  rlimit limit{};
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  if (limit.rlim_cur >= static_cast<rlim_t>(kNoLimit)) return 0;
  return static_cast<int64_t>(limit.rlim_cur);
}

int64_t PhysicalMemory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return int64_t{pages} * page_size;
}

}  // namespace

int UsableCores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) > 0) {
    return CPU_COUNT(&mask);
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int64_t UsableMemoryBytes() {
  static const int64_t usable = [] {
    int64_t bytes = PhysicalMemory();
    bytes = MinKnown(bytes, CgroupMemoryLimit());
    bytes = MinKnown(bytes, ResourceLimit(RLIMIT_AS));
    return MinKnown(bytes, ResourceLimit(RLIMIT_DATA));
  }();
  return usable;
}

int64_t DefaultSizeLimit() {
  const int64_t usable = UsableMemoryBytes();
  if (usable <= 0) return kUnknownDefault;
  return std::max(usable / 2, kMinDefault);
}

}  // namespace convgate
