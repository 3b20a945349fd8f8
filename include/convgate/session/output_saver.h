// --save-outputs: writes one side's outputs of every sample in the dataset layouts
// (inputs::SaveOutputs) as the samples run, so a slow source runs once and later comparisons load
// the file instead, and a run over thousands of samples holds none of them for it.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/dataset.h"
#include "convgate/session/records.h"

namespace convgate::session {

class OutputSaver {
 public:
  // Inactive when `path` is empty: Keep and Write then do nothing.
  explicit OutputSaver(std::optional<std::filesystem::path> path) : path_(std::move(path)) {}

  bool active() const { return path_.has_value(); }
  // Whether saving to `path` holds every sample's outputs until the end: a .safetensors does (its
  // header lists every tensor first), the other layouts are written as the samples run.
  static bool HoldsEverySample(const std::optional<std::filesystem::path>& path);
  // Writes one sample's outputs (an .npz's and a .safetensors' are finished by Write). The first
  // call opens the file for `samples` samples, test-case files in the order of `declared` (the
  // side's declared outputs; empty: each sample's order). A failure is kept for Write to report,
  // and nothing more is written.
  void Keep(const TensorMap& outputs, size_t samples, const std::vector<TensorInfo>& declared);
  // Finishes the file and records its path in `side`. Errors are Stage::kWrite.
  std::optional<GateError> Write(SideRecord& side);

 private:
  std::optional<std::filesystem::path> path_;
  std::optional<inputs::DatasetWriter> writer_;
  Status failed_;
};

}  // namespace convgate::session
