// Making ONNX Runtime's error messages readable (no ORT headers: unit-tested on its own).
#pragma once

#include <string>
#include <string_view>

namespace convgate::backends {

// ORT's message without what official builds add for ORT's own developers: source locations with
// function signatures ("/onnxruntime_src/.../reshape_helper.h:91 onnxruntime::ReshapeHelper::
// ReshapeHelper(const onnxruntime::TensorShape&, bool) ") and the "[ONNXRuntimeError] : 2 :
// INVALID_ARGUMENT : " prefix. Node names, shapes and ORT's explanation are kept.
std::string CleanOrtMessage(std::string_view message);

}  // namespace convgate::backends
