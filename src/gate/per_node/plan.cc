// The memory side of per-node validation: budget flags and chunk planning.
#include <algorithm>
#include <cmath>
#include <string>

#include "convgate/core/limits.h"
#include "convgate/gate/per_node.h"

namespace convgate::gate {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

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
  // Fixed, not a share of memory: at a quarter of a large machine nothing was ever streamed, and
  // PaddleOCR's PP-OCRv4 detector at 320x320 peaked at 4.7x the plain comparison
  // (bench/per_node_detector.sh: 451 MiB at 512 MiB, plain 97 MiB). 48 MiB keeps it at 1.9x
  // (183 MiB), far below marking every tensor of both models in bare ONNX Runtime (487 MiB);
  // torchvision's models take one to three chunks per sample. --memory-budget trades memory for
  // speed (fewer chunks, fewer runs). A machine with less to spare gets a quarter of it.
  constexpr int64_t kDefault = 48 * kMiB;
  const int64_t usable = UsableMemoryBytes();
  if (usable <= 0) return kDefault;
  return std::clamp<int64_t>(usable / 4, 16 * kMiB, kDefault);
}

Result<LocalErrorMode> ParseLocalErrorMode(std::string_view text) {
  for (LocalErrorMode mode :
       {LocalErrorMode::kNone, LocalErrorMode::kFailed, LocalErrorMode::kAll}) {
    if (text == LocalErrorModeName(mode)) return mode;
  }
  return Status::InvalidArgument("'" + std::string(text) + "': expected failed, all or none");
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
