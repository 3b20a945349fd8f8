// The memory side of per-node validation: budget flags and chunk planning.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "convgate/gate/per_node.h"

namespace convgate::gate {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// Multiplier of a unit suffix ("gib", "gb", "g", ""); 0 when unknown.
double UnitMultiplier(const std::string& unit) {
  struct Unit {
    const char* name;
    double multiplier;
  };
  static constexpr Unit kUnits[] = {{"", 1},
                                    {"b", 1},
                                    {"k", 1024.0},
                                    {"kib", 1024.0},
                                    {"kb", 1e3},
                                    {"m", 1024.0 * 1024},
                                    {"mib", 1024.0 * 1024},
                                    {"mb", 1e6},
                                    {"g", 1024.0 * 1024 * 1024},
                                    {"gib", 1024.0 * 1024 * 1024},
                                    {"gb", 1e9},
                                    {"t", 1024.0 * 1024 * 1024 * 1024},
                                    {"tib", 1024.0 * 1024 * 1024 * 1024},
                                    {"tb", 1e12}};
  for (const Unit& known : kUnits) {
    if (unit == known.name) return known.multiplier;
  }
  return 0.0;
}

}  // namespace

std::string_view LocalErrorModeName(LocalErrorMode mode) {
  switch (mode) {
    case LocalErrorMode::kNone:
      return "none";
    case LocalErrorMode::kFailed:
      return "failed";
    case LocalErrorMode::kAll:
      return "all";
  }
  return "failed";
}

std::string_view NodeStatusName(NodeStatus status) {
  switch (status) {
    case NodeStatus::kPassed:
      return "passed";
    case NodeStatus::kFailed:
      return "failed";
    case NodeStatus::kErrored:
      return "errored";
  }
  return "errored";
}

int64_t DefaultMemoryBudget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return kGiB;
  return std::max<int64_t>(int64_t{pages} * page_size / 4, 64 * kMiB);
}

Result<int64_t> ParseByteSize(std::string_view text) {
  const std::string lower = Lower(text);
  size_t number_end = 0;
  while (
      number_end < lower.size() &&
      (std::isdigit(static_cast<unsigned char>(lower[number_end])) || lower[number_end] == '.')) {
    ++number_end;
  }
  const double multiplier = UnitMultiplier(lower.substr(number_end));
  const std::string number = lower.substr(0, number_end);
  const auto invalid = [&] {
    return Status::InvalidArgument("memory size '" + std::string(text) +
                                   "': expected a number with an optional unit (4096, 512MiB, "
                                   "2GiB, 1.5GB)");
  };
  if (number.empty() || multiplier == 0.0 || std::count(number.begin(), number.end(), '.') > 1) {
    return invalid();
  }
  const double bytes = std::stod(number) * multiplier;
  if (!(bytes >= 1.0) || bytes > 9.0e18) return invalid();
  return static_cast<int64_t>(bytes);
}

Result<LocalErrorMode> ParseLocalErrorMode(std::string_view text) {
  for (LocalErrorMode mode :
       {LocalErrorMode::kNone, LocalErrorMode::kFailed, LocalErrorMode::kAll}) {
    if (text == LocalErrorModeName(mode)) return mode;
  }
  return Status::InvalidArgument("--local-error '" + std::string(text) +
                                 "': expected failed, all or none");
}

std::vector<std::vector<size_t>> PlanChunks(const std::vector<int64_t>& bytes, int64_t budget) {
  std::vector<std::vector<size_t>> chunks;
  int64_t used = 0;
  for (size_t idx = 0; idx < bytes.size(); ++idx) {
    const int64_t size = std::max<int64_t>(bytes[idx], 0);
    if (chunks.empty() || (used + size > budget && !chunks.back().empty())) {
      chunks.emplace_back();
      used = 0;
    }
    chunks.back().push_back(idx);
    used += size;
  }
  return chunks;
}

}  // namespace convgate::gate
