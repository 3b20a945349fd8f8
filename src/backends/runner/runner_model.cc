#include "backends/runner/runner_model.h"

#include "backends/check_inputs.h"
#include "backends/exec/exec_protocol.h"
#include "backends/runner/runner_protocol.h"
#include "convgate/core/python_env.h"
#include "convgate/core/units.h"
#include "convgate/io/npz.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

}  // namespace

Result<std::unique_ptr<RunnerModel>> RunnerModel::Load(const fs::path& model_path, RunnerSpec spec,
                                                       const LoadOptions& options) {
  Result<TempDir> dir = TempDir::Create(spec.temp_prefix);
  if (!dir.ok()) return dir.status().WithContext(spec.label);
  std::unique_ptr<RunnerModel> model(
      new RunnerModel(model_path, std::move(spec), std::move(dir).value(), options));
  CONVGATE_RETURN_IF_ERROR(model->StartRunner());
  return model;
}

Status RunnerModel::StartRunner() {
  SubprocessOptions process_options;
  process_options.max_captured_bytes = kRunnerMaxLogBytes;
  process_options.kill_grace_seconds = kRunnerExitGraceSeconds;
  Result<std::unique_ptr<ChildProcess>> started = ChildProcess::Start(spec_.argv, process_options);
  if (!started.ok()) return started.status().WithContext(path_.string() + ": " + spec_.label);
  runner_ = std::move(started).value();
  Result<std::string> line = runner_->ReadLine(options_.timeout_seconds);
  if (!line.ok()) return RunnerEnded("loading the model", options_.timeout_seconds);
  Result<RunnerHello> hello = ParseRunnerHello(*line);
  if (!hello.ok()) {
    runner_.reset();  // it exits after a start-up failure
    return hello.status().WithContext(path_.string());
  }
  // A restarted runner reads the same file: its signature is the one already handed out.
  if (signature_.inputs.empty() && signature_.outputs.empty()) {
    signature_ = std::move(hello->signature);
  }
  settings_ = hello->settings;
  return Status::OK();
}

Status RunnerModel::RunnerEnded(std::string_view doing, double limit_seconds) const {
  const SubprocessResult& ended = runner_->ended();
  const std::string what = path_.string() + ": " + spec_.label + " (" + std::string(doing) + ")";
  if (ended.timed_out) {
    return Status::Unavailable(
        what + " did not finish within " + FormatDuration(limit_seconds) + " and was stopped" +
        (doing == "loading the model" ? " (--exec-timeout)" : " (--run-timeout)"));
  }
  return CommandFailure(ended, what);
}

double RunnerModel::RunTimeout() const {
  return options_.limits.run_timeout_seconds > 0 ? options_.limits.run_timeout_seconds
                                                 : options_.timeout_seconds;
}

Status RunnerModel::Exchange(const std::string& request) {
  constexpr std::string_view kDoing = "running a sample";
  if (!runner_->WriteLine(request, kRunnerWriteTimeoutSeconds).ok()) {
    return RunnerEnded(kDoing, kRunnerWriteTimeoutSeconds);
  }
  Result<std::string> line = runner_->ReadLine(RunTimeout());
  last_log_ = runner_->stderr_tail();
  if (!line.ok()) {
    if (line.status().code() == StatusCode::kDataLoss) {
      return line.status().WithContext(path_.string() + ": " + spec_.label);
    }
    return RunnerEnded(kDoing, RunTimeout());
  }
  Status response = ParseRunnerResponse(*line);
  if (!response.ok()) return response.WithContext(path_.string());
  return Status::OK();
}

Result<TensorMap> RunThroughRunner(const RunnerFiles& files, const Signature& signature,
                                   const TensorMap& inputs,
                                   const std::vector<std::string>& output_names,
                                   const RunnerExchange& exchange) {
  CONVGATE_RETURN_IF_ERROR(CheckDeclaredInputs(signature, inputs, files.model_path));
  CONVGATE_RETURN_IF_ERROR(CheckNoRepeats(output_names, files.model_path));
  CONVGATE_RETURN_IF_ERROR(CheckOutputsHoldable(signature, output_names, files.model_path));
  const fs::path inputs_npz = files.dir / "inputs.npz";
  const fs::path outputs_npz = files.dir / "outputs.npz";
  std::error_code error;
  fs::remove(outputs_npz, error);  // a failed run must not leave the last run's outputs
  Status written = io::WriteNpz(inputs_npz, inputs);
  if (!written.ok()) return written.WithContext(files.label + ", writing the inputs");
  CONVGATE_RETURN_IF_ERROR(exchange(RunnerRunRequest(inputs_npz, outputs_npz, output_names)));
  // What the runner wrote is held to the tensor and run limits before a member is inflated.
  Result<TensorMap> outputs = io::ReadNpz(outputs_npz, files.limits);
  if (!outputs.ok()) {
    return Status::DataLoss(files.model_path.string() + ": cannot read the outputs " + files.label +
                            " wrote: " + outputs.status().message());
  }
  Result<TensorMap> selected =
      SelectOutputs(std::move(outputs).value(), signature, output_names, "outputs.npz");
  if (!selected.ok()) return selected.status().WithContext(files.model_path.string());
  return selected;
}

Result<TensorMap> RunnerModel::Run(const TensorMap& inputs,
                                   const std::vector<std::string>& output_names) {
  std::lock_guard<std::mutex> lock(mutex_);
  const RunnerFiles files{path_, dir_.path(), spec_.label, options_.limits};
  return RunThroughRunner(files, signature_, inputs, output_names,
                          [this](const std::string& request) {
                            // The runner of a Run that failed by timing out or crashing is gone:
                            // this Run starts another.
                            if (!runner_ || !runner_->running()) {
                              CONVGATE_RETURN_IF_ERROR(StartRunner());
                            }
                            return Exchange(request);
                          });
}

std::string RunnerModel::last_log() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_log_;
}

Result<std::unique_ptr<Model>> LoadVenvRunner(const fs::path& model_path, const VenvRunner& runner,
                                              const LoadOptions& options) {
  Result<fs::path> python = VenvPython();
  if (!python.ok()) return python.status().WithContext("the " + runner.backend + " backend");
  std::error_code error;
  if (!fs::is_regular_file(runner.script, error)) {
    return Status::NotFound("the " + runner.backend + " backend's runner " +
                            runner.script.string() + " does not exist (set " +
                            runner.script_variable + " to its path)");
  }
  RunnerSpec spec;
  spec.argv = {python->string(), runner.script.string(), model_path.string()};
  spec.argv.insert(spec.argv.end(), runner.args.begin(), runner.args.end());
  if (options.intra_op_threads > 0) {
    spec.argv.insert(spec.argv.end(), {"--threads", std::to_string(options.intra_op_threads)});
  }
  spec.label = runner.label;
  spec.temp_prefix = runner.temp_prefix;
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<RunnerModel> model,
                            RunnerModel::Load(model_path, std::move(spec), options));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace convgate::backends
