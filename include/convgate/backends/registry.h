// Every backend convgate knows, in one table: its name, what it runs, whether this build has it and
// where its code lives (in the binary, or a module loaded on first use: backends/plugin.h). The
// list, the factory and the "not in this build" / "not installed" messages all come from it (no
// static self-registration; ggml's backend registry is the model).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/core/status.h"

namespace convgate::backends {

struct BackendInfo {
  std::string name;     // "torch"
  std::string summary;  // "TorchScript (.pt) on libtorch"
  // The shared module that holds it ("libconvgate_backend_torch.so"); empty when it is part of the
  // binary.
  std::string module;
  bool built = false;        // compiled in this build (else: which configure option brings it)
  std::string build_option;  // "CONVGATE_WITH_TORCH (libtorch-dev)"
};

// Every backend, built or not, in a fixed order.
const std::vector<BackendInfo>& BackendTable();

// Names of the backends this build has, e.g. {"ort", "torch", "opencv", "exec"}.
std::vector<std::string> AvailableBackends();

// A new backend by name; a module's library is loaded the first time it is asked for. NotFound for
// a name no row has (listing those that exist) or a backend not in this build (naming the
// configure option); NotFound or Unavailable, naming the file, for a module that is missing or
// cannot be loaded (with dlerror).
Result<std::unique_ptr<Backend>> CreateBackend(std::string_view name);

// Makes backends by name: what a workflow loads every model through. The workflows take one in
// their options (gate::RunOptions::backends, gate::CompareOptions::backends), as LevelDB's
// Options::env, so that tests can hand them a fake backend (tests/testing/fake_backend.h) that
// returns scripted tensors, NaNs, wrong shapes, errors and delays without a runtime or a model.
// Thread safety: Create may be called from several threads at once.
class BackendFactory {
 public:
  virtual ~BackendFactory() = default;

  // A new backend by name, as CreateBackend.
  virtual Result<std::unique_ptr<Backend>> Create(std::string_view name) = 0;

  // The factory of the backends in this build (CreateBackend). Never null; lives as long as the
  // process.
  static BackendFactory* Default();
};

// The default backend for a model file, from its extension (".onnx" -> "ort"), or for a model
// folder (a Hugging Face folder with config.json -> "hf").
// InvalidArgument naming the file when the format is not recognised.
Result<std::string> DefaultBackendFor(const std::filesystem::path& model_path);

// InvalidArgument when an exec command template cannot work: empty, without {outputs} (one process
// per sample) or without both {inputs_dir} and {outputs_dir} (one process serving every sample).
// The exec backend checks it at load; the CLI checks it first, as a usage error.
Status CheckExecTemplate(const std::vector<std::string>& argv_template);

}  // namespace convgate::backends
