// Shared modules loaded on first use: the backends whose SDKs are heavy (backends/plugin.h:
// libtorch, OpenCV) and the PostgreSQL store (libpqxx, libpq and the ~25 libraries they bring), so
// that a command which does not need one never maps it (`convgate --version` maps 18 libraries).
// ggml's backend registry and ONNX Runtime's provider libraries are the models.
//
// C++ objects cross a module's boundary, so a module must come from the same build as the binary:
// each entry point reports ModuleBuildId(), and callers refuse a mismatch.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate {

// Where modules are looked for, in order: each folder of $CONVGATE_PLUGIN_PATH (':'-separated),
// the folder of the running binary, <that folder>/../lib/convgate (an installed layout), the
// folder convgate/ beside libconvgate.so in a program linking it (install_layout.h CodeFolder),
// and the folder this build writes its modules to (so tests in the build tree find them).
std::vector<std::filesystem::path> ModuleSearchPath();

// "0.1.0 (fc7e89677790)": kVersion and kBuildCommit of this build.
const char* ModuleBuildId();

struct LoadedModule {
  std::filesystem::path path;  // where it was found
  void* entry = nullptr;       // the address of its entry point
};

// Loads `file` (e.g. "libconvgate_backend_torch.so") from the search path, once per process, and
// returns the address of its `symbol`. The library stays loaded for the process's lifetime
// (libtorch does not survive being unloaded). `kind` ("backend", "store") names the module in
// messages: NotFound "the <kind> module <file> is not installed: looked in ..."; Unavailable
// "cannot load the <kind> module <path>: <dlerror>" or "<path> is not a convgate <kind> module
// (no <symbol>)". Thread-safe.
Result<LoadedModule> LoadModule(std::string_view file, const char* symbol, std::string_view kind);

// Unavailable when a module's entry point reports another build (`abi` != `expected_abi`, or
// `build` != ModuleBuildId()): "the <kind> module <path> comes from convgate <build>, not from
// this build (<id>): install the binary and its modules together".
Status CheckModuleBuild(const LoadedModule& module, std::string_view kind, int abi,
                        int expected_abi, const char* build);

}  // namespace convgate
