// --save-outputs: keeps one side's outputs of every sample and writes them in the dataset layouts
// (inputs::SaveOutputs), so a slow source runs once and later comparisons load the file instead.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/tensor.h"
#include "convgate/session/records.h"

namespace convgate::session {

class OutputSaver {
 public:
  // Inactive when `path` is empty: Keep and Write then do nothing.
  explicit OutputSaver(std::optional<std::filesystem::path> path) : path_(std::move(path)) {}

  bool active() const { return path_.has_value(); }
  // Keeps a copy of one sample's outputs (memory: every sample's outputs until Write).
  void Keep(const TensorMap& outputs);
  // Writes what was kept; names/dtypes come from `outputs` (the side's declared outputs, or the
  // kept tensors themselves when empty). Records the path in `side`. Errors are Stage::kWrite.
  std::optional<GateError> Write(const std::vector<TensorInfo>& outputs, SideRecord& side);

 private:
  std::optional<std::filesystem::path> path_;
  std::vector<TensorMap> samples_;
};

}  // namespace convgate::session
