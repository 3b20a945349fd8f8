// Factory for the ONNX Runtime backend ("ort"). Deliberately free of ONNX Runtime headers so the
// registry can include it; only files in this folder include the SDK.
#pragma once

#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

std::unique_ptr<Backend> CreateOrtBackend();

}  // namespace convgate::backends
