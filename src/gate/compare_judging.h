// What judging a check needs besides judge.h: the dtype a saved comparison describes.
#pragma once

#include <optional>
#include <string>

#include "convgate/core/dtype.h"
#include "convgate/core/tensor.h"
#include "convgate/gate/results.h"

namespace convgate::gate::internal {

// The dtype of a TensorComparison description ("float16[1, 10]" -> float16); nullopt if unknown.
std::optional<DType> DTypeOfDescription(const std::string& description);

}  // namespace convgate::gate::internal
