// A model served by a persistent runner process: one process per loaded model, started by Load,
// serving every Run over runner_protocol.h's JSON lines, tensors in .npz files in a folder of the
// Model's own. The openvino backend's runner (openvino_runner.py) and the torch-export backend's
// (pt2_runner.py) are such models; openvino_backend.h states the behaviour (time limits, restarts,
// errors). The hf backend's models share one process instead (hf/hf_host.h) and only
// RunThroughRunner.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/core/child_process.h"
#include "convgate/core/temp_dir.h"

namespace convgate::backends {

// What starts a runner and how messages name it.
struct RunnerSpec {
  std::vector<std::string> argv;  // the runner's command line; it reads the model from it
  std::string label;              // "the OpenVINO runner", in every message about the process
  std::string temp_prefix;        // the Model's folder: TempDir::Create(temp_prefix)
};

class RunnerModel : public Model {
 public:
  // Starts the runner and waits (LoadOptions::timeout_seconds) for its start-up line.
  // REQUIRES: argv's program and script exist (the backend checked).
  static Result<std::unique_ptr<RunnerModel>> Load(const std::filesystem::path& model_path,
                                                   RunnerSpec spec, const LoadOptions& options);

  const Signature& signature() const override { return signature_; }
  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override;
  std::string last_log() const override;
  std::string settings() const override { return settings_; }

 private:
  RunnerModel(std::filesystem::path path, RunnerSpec spec, TempDir dir, const LoadOptions& options)
      : path_(std::move(path)), spec_(std::move(spec)), dir_(std::move(dir)), options_(options) {}

  // Starts the runner and reads its start-up line: the signature (kept from the first start) and
  // the settings. REQUIRES: mutex_ held, or the Model not yet shared.
  Status StartRunner();
  // One request and its response. REQUIRES: mutex_ held and the runner running.
  Status Exchange(const std::string& request);
  // The Status for a runner that ended while `doing` ("starting", "running a sample").
  Status RunnerEnded(std::string_view doing, double limit_seconds) const;
  double RunTimeout() const;

  std::filesystem::path path_;
  RunnerSpec spec_;
  TempDir dir_;  // inputs.npz and outputs.npz of each Run; removed with the Model
  LoadOptions options_;
  Signature signature_;
  std::string settings_;

  mutable std::mutex mutex_;  // guards runner_ and last_log_; serializes Run
  std::unique_ptr<ChildProcess> runner_;
  std::string last_log_;
};

// One sample through a runner that speaks runner_protocol.h, whoever owns the process: checks the
// inputs against `signature`, writes them to `dir`/inputs.npz, hands `exchange` the request line
// (it returns once the runner answered), reads `dir`/outputs.npz under `limits` and selects
// `output_names`. Errors name `model_path`; `label` names the runner ("the hf runner").
struct RunnerFiles {
  const std::filesystem::path& model_path;
  const std::filesystem::path& dir;
  const std::string& label;
  const Limits& limits;
};
using RunnerExchange = std::function<Status(const std::string& request)>;
Result<TensorMap> RunThroughRunner(const RunnerFiles& files, const Signature& signature,
                                   const TensorMap& inputs,
                                   const std::vector<std::string>& output_names,
                                   const RunnerExchange& exchange);

// A runner script of `backend` under the venv's python (core/python_env.h): argv is python,
// `script`, the model, `args`, then --threads N when LoadOptions::intra_op_threads > 0. No venv is
// the venv's error in `backend`'s context; a missing script is NotFound naming it and
// `script_variable`, the environment variable that points at another.
struct VenvRunner {
  std::string backend;  // "openvino"
  std::filesystem::path script;
  std::string script_variable;  // "CONVGATE_OPENVINO_RUNNER"
  std::vector<std::string> args = {};
  std::string label;        // RunnerSpec::label
  std::string temp_prefix;  // RunnerSpec::temp_prefix
};
Result<std::unique_ptr<Model>> LoadVenvRunner(const std::filesystem::path& model_path,
                                              const VenvRunner& runner, const LoadOptions& options);

}  // namespace convgate::backends
