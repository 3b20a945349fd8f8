// The "exec" backend: any runtime as an external command speaking the exec protocol
// (exec_protocol.h). Always built: it needs nothing but the command the user names.
#pragma once

#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

std::unique_ptr<Backend> CreateExecBackend();

}  // namespace convgate::backends
