// ONNX Runtime as a converter: the optimized model it writes after applying its graph
// optimizations (constant folding, fusions, layout changes) at a chosen level. Declared here so
// that src/convert/ can use it without including ONNX Runtime's headers (only
// src/backends/onnxruntime/ may, docs/architecture.md rule 2).
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
// With `external_data_file` (a file name, not a path) ORT writes the initializers of 1 KiB and
// more to that file in `output`'s folder, named by the model; empty: every initializer inside the
// model. A source with external data needs one: ORT otherwise writes a model that names the
// source's data files relative to a folder they are not in.
Status WriteOrtOptimizedModel(const std::filesystem::path& source,
                              const std::filesystem::path& output, OrtOptimizationLevel level,
                              const std::string& external_data_file = "");

// ONNX Runtime's version ("1.29.0"), or "" when this build has no ONNX Runtime.
std::string OrtRuntimeVersion();

}  // namespace convgate::backends
