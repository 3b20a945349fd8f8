// A declared tensor (name, dtype, shape) as a model's signature holds it, for tests that hand-make
// signatures.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "convgate/core/signature.h"

namespace convgate::testing {

inline TensorInfo Declared(const std::string& name, DType dtype, std::vector<Dim> dims) {
  TensorInfo info;
  info.name = name;
  info.dtype = dtype;
  info.type_name = std::string(DTypeName(dtype));
  info.has_shape = true;
  info.shape = std::move(dims);
  return info;
}

}  // namespace convgate::testing
