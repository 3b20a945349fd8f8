#include "backends/torch_export/torch_export_backend.h"

#include <cstdlib>

#include "backends/runner/runner_model.h"
#include "convgate/core/file_util.h"
#include "convgate/core/python_env.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

fs::path RunnerScript() {
  const char* script = std::getenv("CONVGATE_PT2_RUNNER");
  if (script != nullptr && script[0] != '\0') return script;
  return fs::path(CONVGATE_SOURCE_DIR) / "scripts" / "pt2_runner.py";
}

class TorchExportBackend : public Backend {
 public:
  std::string name() const override { return "torch-export"; }
  // The torch the runner reports is in each Model's settings; asked before any load, this names
  // the runner, as the hf backend does.
  std::string version() const override { return "pt2_runner 1 (the venv's torch)"; }
  bool SupportsIntermediates() const override { return false; }

  Result<std::unique_ptr<Model>> Load(const fs::path& model_path,
                                      const LoadOptions& options) override {
    std::error_code error;
    if (!fs::exists(model_path, error)) {
      return Status::NotFound(model_path.string() + ": no such file");
    }
    CONVGATE_RETURN_IF_ERROR(CheckRegularFile(model_path));
    if (options.intra_op_threads < 0) {
      return Status::InvalidArgument("intra_op_threads must be >= 0, got " +
                                     std::to_string(options.intra_op_threads));
    }
    Result<fs::path> python = VenvPython();
    if (!python.ok()) return python.status().WithContext("the torch-export backend");
    const fs::path script = RunnerScript();
    if (!fs::is_regular_file(script, error)) {
      return Status::NotFound("the torch-export backend's runner " + script.string() +
                              " does not exist (set CONVGATE_PT2_RUNNER to its path)");
    }
    RunnerSpec spec;
    spec.argv = {python->string(), script.string(), model_path.string()};
    if (options.intra_op_threads > 0) {
      spec.argv.insert(spec.argv.end(), {"--threads", std::to_string(options.intra_op_threads)});
    }
    spec.label = "the torch.export runner";
    spec.temp_prefix = "pt2";
    CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<RunnerModel> model,
                              RunnerModel::Load(model_path, std::move(spec), options));
    return std::unique_ptr<Model>(std::move(model));
  }
};

}  // namespace

std::unique_ptr<Backend> CreateTorchExportBackend() {
  return std::make_unique<TorchExportBackend>();
}

}  // namespace convgate::backends
