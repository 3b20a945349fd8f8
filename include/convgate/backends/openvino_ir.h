// OpenVINO as a converter, in-process: an ONNX model (or any format OpenVINO's frontends read) to
// an IR through OpenVINO's C++ runtime, Core::read_model + save_model, the frontend ovc uses.
// Declared here so that src/convert/ can use it without OpenVINO's headers (only
// src/backends/openvino/ may include them, docs/architecture.md rule 2); the work is done by the
// openvino backend module, loaded on first use.
#pragma once

#include <filesystem>
#include <string>

#include "convgate/core/status.h"

namespace convgate::backends {

// Whether this build runs OpenVINO in-process (it found the runtime the venv's openvino wheel
// ships); false, converters go through the venv's Python openvino instead.
bool OpenVinoInProcess();

// The runtime's version ("2026.4.1"); Unavailable when the module cannot be loaded.
Result<std::string> OpenVinoIrWriterVersion();

// Writes the IR of `source` at `out_xml` (+ the .bin beside it), weights compressed to float16
// when `compress_to_fp16` (ovc's --compress_to_fp16). Errors name the source: NotFound, DataLoss
// (OpenVINO cannot read it), Unimplemented (an operator without a conversion rule, or a build
// without OpenVINO's runtime), Unavailable (the module cannot be loaded, or writing failed).
Status WriteOpenVinoIr(const std::filesystem::path& source, const std::filesystem::path& out_xml,
                       bool compress_to_fp16);

}  // namespace convgate::backends
