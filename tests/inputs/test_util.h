// Signature builders shared by the inputs tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "convgate/core/signature.h"

namespace convgate::inputs::test_util {

inline TensorInfo Input(std::string name, DType dtype, std::vector<Dim> shape) {
  TensorInfo info;
  info.name = std::move(name);
  info.dtype = dtype;
  info.type_name = std::string(DTypeName(dtype));
  info.has_shape = true;
  info.shape = std::move(shape);
  return info;
}

// An input declaring no shape at all (rank unknown).
inline TensorInfo ShapelessInput(std::string name, DType dtype) {
  TensorInfo info;
  info.name = std::move(name);
  info.dtype = dtype;
  info.type_name = std::string(DTypeName(dtype));
  return info;
}

inline Signature MakeSignature(std::vector<TensorInfo> inputs) {
  Signature signature;
  signature.inputs = std::move(inputs);
  return signature;
}

inline Dim Sym(std::string symbol) { return Dim::Symbolic(std::move(symbol)); }
inline Dim Fix(int64_t value) { return Dim::Fixed(value); }

}  // namespace convgate::inputs::test_util
