// A model served by an OpenVINO runner process (openvino_backend.h states the behaviour).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/core/child_process.h"
#include "convgate/core/temp_dir.h"

namespace convgate::backends {

class OpenVinoModel : public Model {
 public:
  // REQUIRES: `python` and `runner_script` exist (the backend checked).
  static Result<std::unique_ptr<OpenVinoModel>> Load(const std::filesystem::path& model_path,
                                                     const std::filesystem::path& python,
                                                     const std::filesystem::path& runner_script,
                                                     const LoadOptions& options);

  const Signature& signature() const override { return signature_; }
  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override;
  std::string last_log() const override;
  std::string settings() const override { return settings_; }

 private:
  OpenVinoModel(std::filesystem::path path, TempDir dir, const LoadOptions& options)
      : path_(std::move(path)), dir_(std::move(dir)), options_(options) {}

  // Starts the runner and reads its start-up line: the signature (kept from the first start) and
  // the settings. REQUIRES: mutex_ held, or the Model not yet shared.
  Status StartRunner();
  // One request and its response. REQUIRES: mutex_ held and the runner running.
  Status Exchange(const std::string& request);
  // The Status for a runner that ended while `doing` ("starting", "running a sample").
  Status RunnerEnded(std::string_view doing, double limit_seconds) const;
  double RunTimeout() const;

  std::filesystem::path path_;
  TempDir dir_;  // inputs.npz and outputs.npz of each Run; removed with the Model
  LoadOptions options_;
  std::vector<std::string> argv_;
  Signature signature_;
  std::string settings_;

  mutable std::mutex mutex_;  // guards runner_ and last_log_; serializes Run
  std::unique_ptr<ChildProcess> runner_;
  std::string last_log_;
};

}  // namespace convgate::backends
