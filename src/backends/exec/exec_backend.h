// The "exec" backend: any runtime as an external command speaking the exec protocol
// (exec_protocol.h). Always built: it needs nothing but the command the user names.
#pragma once

#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

std::unique_ptr<Backend> CreateExecBackend();

// An exec model whose signature is known without running it and whose command template is
// options.exec_argv (checked by the caller): a backend built on a runner script (hf) uses it.
std::unique_ptr<Model> CreateExecModel(std::filesystem::path model_path, Signature signature,
                                       const LoadOptions& options);

}  // namespace convgate::backends
