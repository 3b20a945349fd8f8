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
// nullopt for element types convgate cannot hold (complex, float8, int4, ...).
std::optional<DType> DTypeFromOrt(ONNXTensorElementDataType element_type);
// DTypeName for types convgate holds; "complex64", "element type 17", ... for the others.
std::string OrtElementTypeName(ONNXTensorElementDataType element_type);

// A CPU Ort::Value for an input. Numeric tensors are viewed without copying their bytes, so
// REQUIRES: `tensor` outlives the value and is not written while ORT reads it (ORT does not write
// inputs). String tensors are copied into a value ORT's allocator owns, since ORT keeps its own
// string objects. Throws Ort::Exception.
Ort::Value OrtInputValue(const Tensor& tensor);

// An output value as a Tensor: numeric tensors take the value's buffer over (no copy; the Tensor
// keeps the value alive), string outputs are copied element by element. Unimplemented naming
// `name` for non-tensor values (sequence, map, optional) and element types convgate cannot hold.
// Throws Ort::Exception.
Result<Tensor> TensorFromOrtValue(Ort::Value value, const std::string& name);

}  // namespace convgate::backends
