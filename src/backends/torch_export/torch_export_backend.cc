#include "backends/torch_export/torch_export_backend.h"

#include <cstdlib>

#include "backends/runner/runner_model.h"
#include "convgate/core/file_util.h"
#include "convgate/core/install_layout.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

fs::path RunnerScript() { return RuntimeScript("pt2_runner.py", "CONVGATE_PT2_RUNNER"); }

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
    return LoadVenvRunner(model_path,
                          {.backend = "torch-export",
                           .script = RunnerScript(),
                           .script_variable = "CONVGATE_PT2_RUNNER",
                           .label = "the torch.export runner",
                           .temp_prefix = "pt2"},
                          options);
  }
};

}  // namespace

std::unique_ptr<Backend> CreateTorchExportBackend() {
  return std::make_unique<TorchExportBackend>();
}

}  // namespace convgate::backends
