#include "backends/openvino/openvino_backend.h"

#include <cstdlib>

#include "backends/runner/runner_model.h"
#if CONVGATE_OPENVINO_IN_PROCESS
#include "backends/openvino/ov_model.h"
#endif
#include "convgate/core/file_util.h"
#include "convgate/core/install_layout.h"
#include "convgate/core/python_env.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

const char* RunnerOverride() {
  const char* script = std::getenv("CONVGATE_OPENVINO_RUNNER");
  return script != nullptr && script[0] != '\0' ? script : nullptr;
}

fs::path RunnerScript() {
  if (const char* script = RunnerOverride()) return script;
  return RuntimeScript("openvino_runner.py", nullptr);
}

// In-process unless CONVGATE_OPENVINO_RUNNER names a runner (or this build has no runtime).
bool UseRunner() {
#if CONVGATE_OPENVINO_IN_PROCESS
  return RunnerOverride() != nullptr;
#else
  return true;
#endif
}

// The version of the openvino package in the venv, from its dist-info folder's name
// ("openvino-2026.4.1.dist-info"): version() is asked before any model loads, and importing
// openvino to ask takes ~1 s.
std::string InstalledVersion() {
  const fs::path lib = VenvFolder() / "lib";
  std::error_code error;
  for (const fs::directory_entry& python : fs::directory_iterator(lib, error)) {
    const fs::path site = python.path() / "site-packages";
    for (const fs::directory_entry& entry : fs::directory_iterator(site, error)) {
      const std::string name = entry.path().filename().string();
      constexpr std::string_view kPrefix = "openvino-", kSuffix = ".dist-info";
      if (name.size() > kPrefix.size() + kSuffix.size() && name.starts_with(kPrefix) &&
          name.ends_with(kSuffix)) {
        return name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
      }
    }
  }
  return "unknown (no openvino in " + VenvFolder().string() + ")";
}

// The model file, and an IR's weights (OpenVINO reads MODEL.bin beside MODEL.xml): regular files,
// since OpenVINO opens them itself and would block on a FIFO until the load timeout.
Status CheckModelFiles(const fs::path& model_path) {
  std::error_code error;
  if (!fs::exists(model_path, error)) {
    return Status::NotFound(model_path.string() + ": no such file");
  }
  CONVGATE_RETURN_IF_ERROR(CheckRegularFile(model_path));
  if (model_path.extension() != ".xml") return Status::OK();
  fs::path weights = model_path;
  weights.replace_extension(".bin");
  if (!fs::exists(weights, error)) {
    return Status::NotFound(model_path.string() + ": its weights file " + weights.string() +
                            " does not exist (an OpenVINO IR is the .xml and the .bin beside it)");
  }
  Status regular = CheckRegularFile(weights);
  if (!regular.ok()) return regular.WithContext(model_path.string() + ": its weights file");
  return Status::OK();
}

class OpenVinoBackend : public Backend {
 public:
  std::string name() const override { return "openvino"; }
  std::string version() const override {
#if CONVGATE_OPENVINO_IN_PROCESS
    if (!UseRunner()) return OpenVinoRuntimeVersion();
#endif
    return InstalledVersion();
  }
  bool SupportsIntermediates() const override { return true; }

  Result<std::unique_ptr<Model>> Load(const fs::path& model_path,
                                      const LoadOptions& options) override {
    CONVGATE_RETURN_IF_ERROR(CheckModelFiles(model_path));
    if (options.intra_op_threads < 0) {
      return Status::InvalidArgument("intra_op_threads must be >= 0, got " +
                                     std::to_string(options.intra_op_threads));
    }
#if CONVGATE_OPENVINO_IN_PROCESS
    if (!UseRunner()) return LoadOpenVinoInProcess(model_path, options);
#endif
    return LoadThroughRunner(model_path, options);
  }

 private:
  static Result<std::unique_ptr<Model>> LoadThroughRunner(const fs::path& model_path,
                                                          const LoadOptions& options) {
    return LoadVenvRunner(model_path,
                          {.backend = "openvino",
                           .script = RunnerScript(),
                           .script_variable = "CONVGATE_OPENVINO_RUNNER",
                           .args = {"--device", "CPU", "--precision", "f32"},
                           .label = "the OpenVINO runner",
                           .temp_prefix = "openvino"},
                          options);
  }
};

}  // namespace

std::unique_ptr<Backend> CreateOpenVinoBackend() { return std::make_unique<OpenVinoBackend>(); }

}  // namespace convgate::backends
