// ONNX Runtime as a converter: the optimized model it writes after applying its graph
// optimizations (constant folding, fusions, layout changes) at a chosen level. Declared here so
// that src/convert/ can use it without including ONNX Runtime's headers (only
// src/backends/onnxruntime/ may, STYLE.md section 2).
#pragma once

#include <filesystem>
#include <string>

#include "convgate/core/status.h"

namespace convgate::backends {

// ONNX Runtime's GraphOptimizationLevel values convgate offers (ORT_DISABLE_ALL would be a copy).
enum class OrtOptimizationLevel { kBasic, kExtended, kAll };

// Loads `source` in ONNX Runtime (CPU) at `level` with SessionOptions' optimized model file path
// set to `output`, so ORT writes the optimized graph there. Errors name the model: as
// Backend::Load's (NotFound, DataLoss, InvalidArgument, Unimplemented, Unavailable), and
// Unimplemented when this build has no ONNX Runtime. At kAll the result may contain layout
// transformations specific to this CPU (ONNX Runtime says so): run it where it was made.
Status WriteOrtOptimizedModel(const std::filesystem::path& source,
                              const std::filesystem::path& output, OrtOptimizationLevel level);

// ONNX Runtime's version ("1.29.0"), or "" when this build has no ONNX Runtime.
std::string OrtRuntimeVersion();

}  // namespace convgate::backends
