// Factory for the OpenVINO backend ("openvino"): OpenVINO IR (.xml, weights in the .bin beside
// it) and ONNX models compiled for OpenVINO's CPU plugin.
//
// Two implementations behind one behaviour. In a build that found OpenVINO's C++ runtime (the one
// the venv's openvino wheel ships, cmake/FindOpenVinoRuntime.cmake) the model is read, compiled
// and run in-process (ov_model.h). Otherwise, or when CONVGATE_OPENVINO_RUNNER names a runner
// script, the backend drives OpenVINO's Python API from the project venv (core/python_env.h:
// CONVGATE_VENV): Load starts one runner process (openvino_runner.py) that reads and compiles the
// model once and then serves every Run of the Model over a JSON-lines protocol, tensors
// travelling in .npz files in a folder of the Model's own; the runner defaults to
// runtime/openvino_runner.py in the source tree convgate was built from.
//
// Behaviour:
//  - signature(): OpenVINO's view of the model's inputs and outputs (names, element types,
//    partial shapes). OpenVINO keeps no dimension symbols: a dynamic dim is Dim::Unknown(), bound
//    at each Run by the shapes of the inputs fed (the CPU plugin runs dynamic shapes as they
//    come).
//  - Inference precision f32 (INFERENCE_PRECISION_HINT): the CPU plugin's default on machines
//    with AVX512-BF16 or AMX is bf16, which would compare the bf16 arithmetic rather than the
//    conversion. settings() says what the compiled model reports ("CPU, inference precision f32").
//    LoadOptions::intra_op_threads > 0 sets INFERENCE_NUM_THREADS.
//  - Intermediate tensors (SupportsIntermediates): a Run naming tensors that are not outputs reads
//    the model again, adds them with Model.add_outputs and compiles that; the last such model is
//    kept, as the "ort" backend keeps one intermediate-value session.
//  - Time: each Run is bounded by limits.run_timeout_seconds (timeout_seconds when that is <= 0):
//    in-process the inference request is cancelled, a runner is killed (the next Run starts a new
//    one). Starting a runner (Python, OpenVINO, compiling) is bounded by
//    LoadOptions::timeout_seconds; an in-process load is not. A runner that dies (a crash, the OOM
//    killer) is an Unavailable error naming the model and the end of its stderr.
//  - Errors: the model file or the IR's .bin missing is NotFound naming it; for the runner, no
//    venv, or a venv without openvino, FailedPrecondition/NotFound saying to run
//    ./scripts/setup.sh; a model
//    OpenVINO cannot read DataLoss (Unimplemented for an operator it has no conversion for),
//    one it cannot compile InvalidArgument, with OpenVINO's message; a failure while running
//    Unavailable naming the model.
// Thread safety: Run calls on one Model are serialized (one infer request, or one runner, serves
// them in turn).
#pragma once

#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

std::unique_ptr<Backend> CreateOpenVinoBackend();

}  // namespace convgate::backends
