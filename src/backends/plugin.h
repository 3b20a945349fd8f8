// The contract between convgate and a backend module loaded at run time
// (libconvgate_backend_<name>.so, ggml's backend registry and ONNX Runtime's provider libraries
// being the models): the heavy SDKs (libtorch: ~290 shared libraries; OpenCV) are loaded only by
// a command that runs a model on them, so `convgate --version` or comparing two .npz files pays
// for neither.
//
// C++ objects cross this boundary (a Backend, the Models it loads, Tensors and Statuses), so a
// module must come from the same build as the binary: the loader compares `build` and refuses a
// mismatch with a message rather than risk a layout difference.
#pragma once

#include <memory>

#include "convgate/backends/backend.h"
#include "convgate/core/module_loader.h"

namespace convgate::backends {

// Bumped whenever Backend's interface, or anything passed through it, changes.
inline constexpr int kBackendPluginAbi = 1;

struct BackendPlugin {
  int abi;            // kBackendPluginAbi of the module's build
  const char* build;  // "0.1.0 (fc7e89677790)": kVersion and kBuildCommit of the module's build
  std::unique_ptr<Backend> (*create)();
};

// "0.1.0 (fc7e89677790)" for this build.
inline const char* PluginBuildId() { return ModuleBuildId(); }

}  // namespace convgate::backends

// Defined by each module (plugin_entry.cc), the one symbol a module exports; the loader finds it
// with dlsym.
extern "C" __attribute__((visibility("default"))) const convgate::backends::BackendPlugin*
convgate_backend_plugin();
