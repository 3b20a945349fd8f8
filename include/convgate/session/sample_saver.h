// --save-inputs and --save-outputs: write a run's samples (its inputs, or one side's outputs) in
// the dataset layouts (inputs::DatasetWriter) as the samples run, so a slow source runs once and
// later comparisons load the file instead, and a run over thousands of samples holds none of them
// for it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/dataset.h"
#include "convgate/session/records.h"

namespace convgate::session {

class SampleSaver {
 public:
  enum class What { kInputs, kOutputs };

  // Inactive when `path` is empty: Keep and Finish then do nothing.
  SampleSaver(What what, std::optional<std::filesystem::path> path)
      : what_(what), path_(std::move(path)) {}

  bool active() const { return path_.has_value(); }
  // The samples Keep has written so far.
  size_t kept() const { return kept_; }
  // Whether saving to `path` holds every sample until the end: a .safetensors does (its header
  // lists every tensor first), the other layouts are written as the samples run.
  static bool HoldsEverySample(const std::optional<std::filesystem::path>& path);

  // Writes one sample (an .npz's and a .safetensors' are finished by Finish). The first call
  // opens the file for `samples` samples, test-case files in the order of `declared` (the model's
  // declared inputs or outputs; empty: each sample's order). A failure (Stage::kWrite's, naming
  // the flag) is returned, kept for Finish to report again, and nothing more is written.
  Status Keep(const TensorMap& sample, size_t samples, const std::vector<TensorInfo>& declared);
  // Finishes the file and sets `saved_to` to its path. Errors are Stage::kWrite, naming the flag.
  std::optional<GateError> Finish(std::string& saved_to);

 private:
  Result<inputs::DatasetWriter> Open(size_t samples, const std::vector<TensorInfo>& declared) const;
  std::string Flag() const;

  What what_;
  std::optional<std::filesystem::path> path_;
  std::optional<inputs::DatasetWriter> writer_;
  Status failed_;
  size_t kept_ = 0;
};

}  // namespace convgate::session
