// The process-wide ONNX Runtime environment and ORT error translation.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "backends/onnxruntime/ort_message.h"
#include "convgate/core/status.h"

namespace convgate::backends {

// The one Ort::Env of the process, created on first use; thread-safe. It logs only errors (ORT's
// warnings about unused initializers and the like are noise on a tool's stderr) and is created
// with telemetry disabled. Unavailable when the runtime library is older than the headers or the
// environment cannot be created; the failure is remembered, not retried.
Result<Ort::Env*> GetOrtEnv();

// ORT's own version, e.g. "1.29.0".
std::string OrtVersionString();

// A Status for an exception thrown while loading `model_path`, coded by what ORT says went wrong.
Status OrtLoadError(const Ort::Exception& error, const std::filesystem::path& model_path);

}  // namespace convgate::backends
