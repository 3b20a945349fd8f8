// Loading backend modules (backends/plugin.h) on first use.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "backends/plugin.h"
#include "convgate/core/status.h"

namespace convgate::backends {

// Where modules are looked for, in order: each folder of $CONVGATE_PLUGIN_PATH (':'-separated),
// the folder of the running binary, <that folder>/../lib/convgate (an installed layout), and the
// folder this build writes its modules to (so tests in the build tree find them).
std::vector<std::filesystem::path> PluginSearchPath();

// Loads `file` (e.g. "libconvgate_backend_torch.so") from the search path, once per process, and
// returns its entry point. The library stays loaded for the process's lifetime (libtorch does not
// survive being unloaded). NotFound listing the folders searched; Unavailable with dlerror when
// the file exists but cannot be loaded, or comes from another build. Thread-safe.
Result<const BackendPlugin*> LoadBackendPlugin(std::string_view file);

}  // namespace convgate::backends
