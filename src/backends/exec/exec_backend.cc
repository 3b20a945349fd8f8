#include "backends/exec/exec_backend.h"

#include <mutex>

#include "backends/check_inputs.h"
#include "backends/exec/exec_protocol.h"
#include "backends/exec/exec_serve.h"
#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/io/npz.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

// Same bound as SubprocessOptions' default, stated here because the report relies on it: the end
// of a runner's stderr is where its error is, and a chatty runner must not grow the report.
constexpr size_t kMaxLogBytes = 64 * 1024;

// An .onnx model declares its signature; for anything else (an OpenVINO .xml, a TFLite file, a
// folder of weights) the names are unknown until the command has run.
Result<Signature> SignatureOf(const fs::path& model_path) {
  if (model_path.extension() != ".onnx") {
    Signature unknown;
    unknown.positional_inputs = true;
    unknown.positional_outputs = true;
    return unknown;
  }
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(model_path));
  CONVGATE_ASSIGN_OR_RETURN(graph::ModelSummary summary,
                            graph::SummarizeOnnxModelBytes(bytes, model_path));
  return std::move(summary.signature);
}

// Thread safety: Run calls may overlap (each has its own folder and process); last_log() is the
// log of whichever finished last.
class ExecModel : public Model {
 public:
  explicit ExecModel(ExecCommand command) : command_(std::move(command)) {}

  const Signature& signature() const override { return command_.signature; }
  std::string settings() const override { return "one process per sample"; }

  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override {
    CONVGATE_RETURN_IF_ERROR(CheckDeclaredInputs(command_.signature, inputs, command_.model));
    CONVGATE_RETURN_IF_ERROR(CheckNoRepeats(output_names, command_.model));
    // Every run's inputs.npz and outputs.npz are its own, and are gone when it ends (however
    // convgate ends: temp_dir.h).
    Result<TempDir> dir = TempDir::Create("exec");
    if (!dir.ok()) return dir.status().WithContext("exec backend");
    const ExecPaths paths{
        command_.model, dir->path() / "inputs.npz", dir->path() / "outputs.npz", {}, {}};
    Status written = io::WriteNpz(paths.inputs, inputs);
    if (!written.ok()) return written.WithContext("exec backend, writing the inputs");
    const std::vector<std::string> argv = SubstitutePlaceholders(command_.argv_template, paths);
    CONVGATE_ASSIGN_OR_RETURN(SubprocessResult result, RunCommand(argv));
    const std::string what = command_.What();
    if (!result.succeeded()) return CommandFailure(result, what);
    std::error_code error;
    if (!fs::exists(paths.outputs, error)) {
      return Status::DataLoss(what + ": the command exited 0 but wrote no outputs.npz (expected " +
                              paths.outputs.string() + ")");
    }
    // What the command wrote is as untrusted as any file: held to the tensor and run limits
    // before a member is inflated.
    Result<TensorMap> outputs = io::ReadNpz(paths.outputs, command_.limits);
    if (!outputs.ok()) {
      return Status::DataLoss(
          what + ": cannot read the outputs.npz it wrote: " + outputs.status().message());
    }
    Result<TensorMap> selected =
        SelectOutputs(std::move(outputs).value(), command_.signature, output_names, "outputs.npz");
    if (!selected.ok()) return selected.status().WithContext(what);
    return selected;
  }

  std::string last_log() const override {
    std::lock_guard<std::mutex> lock(log_mutex_);
    return last_log_;
  }

 private:
  Result<SubprocessResult> RunCommand(const std::vector<std::string>& argv) {
    SubprocessOptions options;
    options.timeout_seconds = command_.timeout_seconds;
    options.max_captured_bytes = kMaxLogBytes;
    Result<SubprocessResult> result = RunSubprocess(argv, options);
    if (!result.ok()) return result.status().WithContext(command_.model.string());
    std::lock_guard<std::mutex> lock(log_mutex_);
    last_log_ = result->stderr_tail;
    return result;
  }

  ExecCommand command_;
  mutable std::mutex log_mutex_;
  std::string last_log_;
};

class ExecBackend : public Backend {
 public:
  std::string name() const override { return "exec"; }
  // The protocol's version: what runs behind it is the user's command.
  std::string version() const override { return "protocol 1"; }
  bool SupportsIntermediates() const override { return false; }

  Result<std::unique_ptr<Model>> Load(const fs::path& model_path,
                                      const LoadOptions& options) override {
    CONVGATE_RETURN_IF_ERROR(CheckTemplate(options.exec_argv));
    std::error_code error;
    if (!fs::exists(model_path, error)) {
      return Status::NotFound(model_path.string() + ": no such file or folder");
    }
    // Before any sample runs: a typo in the program name is reported once, up front.
    CONVGATE_RETURN_IF_ERROR(FindProgram(options.exec_argv.front()).status());
    CONVGATE_ASSIGN_OR_RETURN(Signature signature, SignatureOf(model_path));
    return CreateExecModel(model_path, std::move(signature), options);
  }
};

}  // namespace

std::unique_ptr<Backend> CreateExecBackend() { return std::make_unique<ExecBackend>(); }

std::unique_ptr<Model> CreateExecModel(std::filesystem::path model_path, Signature signature,
                                       const LoadOptions& options) {
  if (ServesEverySample(options.exec_argv)) {
    return CreateServingExecModel(std::move(model_path), std::move(signature), options);
  }
  return std::make_unique<ExecModel>(
      ExecCommand(std::move(model_path), std::move(signature), options));
}

}  // namespace convgate::backends
