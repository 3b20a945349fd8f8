// The "opencv" backend: ONNX models through OpenCV DNN. Never the default for .onnx (ONNX
// Runtime is); chosen with --backend / --source-backend / --target-backend opencv.
#pragma once

#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

std::unique_ptr<Backend> CreateOpenCvBackend();

}  // namespace convgate::backends
