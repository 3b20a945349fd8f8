// The explicit list of backends compiled into this build (no static self-registration).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/core/status.h"

namespace convgate::backends {

// Names of the model backends compiled in, e.g. {"ort"}.
std::vector<std::string> AvailableBackends();

// NotFound listing the available names when `name` is not compiled in.
Result<std::unique_ptr<Backend>> CreateBackend(std::string_view name);

// The default backend for a model file, from its extension (".onnx" -> "ort").
// InvalidArgument naming the file when the format is not recognised.
Result<std::string> DefaultBackendFor(const std::filesystem::path& model_path);

}  // namespace convgate::backends
