// Loading backend modules (backends/plugin.h) on first use.
#pragma once

#include <string_view>

#include "backends/plugin.h"
#include "convgate/core/status.h"

namespace convgate::backends {

// Loads `file` (e.g. "libconvgate_backend_torch.so") with core's LoadModule and returns its entry
// point. NotFound listing the folders searched; Unavailable with dlerror when the file exists but
// cannot be loaded, or comes from another build. Thread-safe.
Result<const BackendPlugin*> LoadBackendPlugin(std::string_view file);

}  // namespace convgate::backends
