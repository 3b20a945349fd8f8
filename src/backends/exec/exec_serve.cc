#include "backends/exec/exec_serve.h"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/check_inputs.h"
#include "backends/exec/exec_protocol.h"
#include "backends/runner/runner_protocol.h"
#include "convgate/core/child_process.h"
#include "convgate/core/temp_dir.h"
#include "convgate/core/units.h"
#include "convgate/io/npz.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

// Lines a command may print on stdout around an answer before it is taken for a command that does
// not speak the protocol (a per-sample runner given the serving placeholders).
constexpr int kMaxIgnoredLines = 1000;

class ServingExecModel : public Model {
 public:
  explicit ServingExecModel(ExecCommand command) : command_(std::move(command)) {}

  const Signature& signature() const override { return command_.signature; }
  std::string settings() const override { return "one process serving every sample"; }

  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override {
    CONVGATE_RETURN_IF_ERROR(CheckDeclaredInputs(command_.signature, inputs, command_.model));
    CONVGATE_RETURN_IF_ERROR(CheckNoRepeats(output_names, command_.model));
    std::lock_guard<std::mutex> lock(mutex_);
    if (!process_ || !process_->running()) CONVGATE_RETURN_IF_ERROR(Start());
    const std::string name = "sample_" + std::to_string(next_sample_++);
    const fs::path in = dir_->path() / "inputs" / (name + ".npz");
    const fs::path out = dir_->path() / "outputs" / (name + ".npz");
    Status written = io::WriteNpz(in, inputs, io::NpzWriteOptions{.sync = false});
    if (!written.ok()) return written.WithContext("exec backend, writing the inputs");
    Status answered = Exchange(name);
    std::error_code ignored;
    fs::remove(in, ignored);
    if (!answered.ok()) return answered;
    // What the command wrote is as untrusted as any file: held to the tensor and run limits
    // before a member is inflated.
    Result<TensorMap> outputs = io::ReadNpz(out, command_.limits);
    fs::remove(out, ignored);
    if (!outputs.ok()) {
      return Status::DataLoss(command_.What() + ": it answered 'ok " + name + "' but " +
                              out.string() + " cannot be read: " + outputs.status().message());
    }
    Result<TensorMap> selected =
        SelectOutputs(std::move(outputs).value(), command_.signature, output_names, name + ".npz");
    if (!selected.ok()) return selected.status().WithContext(command_.What());
    return selected;
  }

  std::string last_log() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_log_;
  }

 private:
  // A fresh folder and process. REQUIRES: mutex_ held.
  Status Start() {
    process_.reset();
    dir_.reset();
    Result<TempDir> dir = TempDir::Create("exec");
    if (!dir.ok()) return dir.status().WithContext("exec backend");
    dir_ = std::move(dir).value();
    std::error_code error;
    ExecPaths paths{command_.model, {}, {}, dir_->path() / "inputs", dir_->path() / "outputs"};
    if (!fs::create_directory(paths.inputs_dir, error) ||
        !fs::create_directory(paths.outputs_dir, error)) {
      return Status::Unavailable("exec backend: cannot create " + paths.inputs_dir.string() + ": " +
                                 error.message());
    }
    SubprocessOptions options;
    options.max_captured_bytes = kRunnerMaxLogBytes;
    options.kill_grace_seconds = kRunnerExitGraceSeconds;
    Result<std::unique_ptr<ChildProcess>> started =
        ChildProcess::Start(SubstitutePlaceholders(command_.argv_template, paths), options);
    if (!started.ok()) return started.status().WithContext(command_.What());
    process_ = std::move(started).value();
    return Status::OK();
  }

  // Hands the command one sample and waits for its answer. REQUIRES: mutex_ held.
  Status Exchange(const std::string& name) {
    if (!process_->WriteLine(name, kRunnerWriteTimeoutSeconds).ok()) return Ended(name);
    for (int ignored = 0; ignored <= kMaxIgnoredLines; ++ignored) {
      Result<std::string> line = process_->ReadLine(command_.timeout_seconds);
      last_log_ = process_->stderr_tail();
      if (!line.ok()) {
        if (line.status().code() == StatusCode::kDataLoss)
          return line.status().WithContext(command_.What());
        return Ended(name);
      }
      if (*line == "ok " + name) return Status::OK();
      if (*line == "error" || line->rfind("error ", 0) == 0) {
        const std::string message = line->size() > 6 ? line->substr(6) : "no message";
        return Status::Unavailable(command_.What() + " failed on " + name + ": " + message);
      }
      if (line->rfind("ok ", 0) == 0) {
        process_.reset();  // out of turn: nothing it says after can be trusted
        return Status::DataLoss(command_.What() + ": answered '" + *line +
                                "' while convgate waited for " + "'ok " + name + "'");
      }
    }
    process_.reset();
    return Status::DataLoss(command_.What() + ": printed " + std::to_string(kMaxIgnoredLines) +
                            " lines without answering 'ok " + name +
                            "'; does it serve samples ({inputs_dir} and {outputs_dir}: read a "
                            "name per stdin line, answer 'ok NAME')?");
  }

  // The Status for a command that ended (or was stopped) while `name` waited.
  Status Ended(const std::string& name) {
    const SubprocessResult& ended = process_->ended();
    last_log_ = ended.stderr_tail;
    if (ended.timed_out) {
      return Status::Unavailable(command_.What() + ": no answer for " + name + " within " +
                                 FormatDuration(command_.timeout_seconds) +
                                 "; it was stopped (--exec-timeout)");
    }
    return CommandFailure(ended, command_.What() + " (serving " + name + ")");
  }

  ExecCommand command_;
  mutable std::mutex mutex_;  // guards everything below; serializes Run
  std::optional<TempDir> dir_;
  std::unique_ptr<ChildProcess> process_;
  uint64_t next_sample_ = 0;
  std::string last_log_;
};

}  // namespace

std::unique_ptr<Model> CreateServingExecModel(fs::path model_path, Signature signature,
                                              const LoadOptions& options) {
  return std::make_unique<ServingExecModel>(
      ExecCommand(std::move(model_path), std::move(signature), options));
}

}  // namespace convgate::backends
