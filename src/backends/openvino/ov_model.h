// The "openvino" backend in-process: OpenVINO's C++ runtime (the one the venv's openvino wheel
// ships) reads, compiles and runs the model in convgate's own process, so a load costs OpenVINO's
// compile and nothing else (no Python start-up, no openvino import, no .npz round trip per run).
// Built when CMake finds the runtime (cmake/FindOpenVinoRuntime.cmake); openvino_backend.h
// describes the behaviour both implementations share.
//
// What differs from the runner process: a Run longer than the run timeout is cancelled
// (InferRequest::cancel) rather than killed, and loading (read + compile) is not bounded by
// LoadOptions::timeout_seconds, as for the torch and opencv backends; a crash inside OpenVINO
// is convgate's crash. CONVGATE_OPENVINO_RUNNER still selects the runner process.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "convgate/backends/backend.h"

namespace convgate::backends {

// Reads and compiles `model_path` (checked to exist by the caller) for OpenVINO's CPU plugin at
// f32 inference precision; errors as openvino_backend.h says.
Result<std::unique_ptr<Model>> LoadOpenVinoInProcess(const std::filesystem::path& model_path,
                                                     const LoadOptions& options);

// The runtime's version, "2026.4.1" (its build number up to the first '-').
std::string OpenVinoRuntimeVersion();

// Converts `source` (any format OpenVINO's frontends read: ONNX, ...) to an IR at `out_xml`
// (+ its .bin) as ovc does: Core::read_model, then save_model, weights compressed to float16
// when `compress_to_fp16`. The .bin is moved into place before the .xml, so the .xml never names
// missing weights. Errors name the source: NotFound, DataLoss (unreadable), Unimplemented (an
// operator without a conversion rule), Unavailable (writing).
Status SaveOpenVinoIr(const std::filesystem::path& source, const std::filesystem::path& out_xml,
                      bool compress_to_fp16);

}  // namespace convgate::backends
