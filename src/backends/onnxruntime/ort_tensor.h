// Conversions between convgate tensors and ONNX Runtime values.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <optional>
#include <string>

#include "convgate/core/dtype.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::backends {

ONNXTensorElementDataType OrtElementType(DType dtype);
// nullopt for element types convgate cannot hold (string, complex, float8, int4, ...).
std::optional<DType> DTypeFromOrt(ONNXTensorElementDataType element_type);
// "string", "float8e4m3fn", ...: how ORT element types without a DType are named in messages.
std::string OrtElementTypeName(ONNXTensorElementDataType element_type);

// A CPU Ort::Value viewing `tensor`'s bytes without copying them. REQUIRES: `tensor` outlives the
// value and is not written while ORT reads it (ORT does not write inputs). Throws Ort::Exception.
Ort::Value OrtValueView(const Tensor& tensor);

// Copies an output value into a Tensor. Unimplemented naming `name` for non-tensor values
// (sequence, map, optional) and element types convgate cannot hold. Throws Ort::Exception.
Result<Tensor> TensorFromOrtValue(const Ort::Value& value, const std::string& name);

}  // namespace convgate::backends
