// Filling one tensor with generated values (internal to the inputs module; GenerateDataset in
// dataset.h is the public entry point and documents the semantics).
#pragma once

#include <string>

#include "convgate/core/dtype.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/input_options.h"
#include "convgate/inputs/prng.h"

namespace convgate::inputs {

// The range used when --val-range gives none: floats [0, 1) for uniform and [-1, 1] (N(0, 1)) for
// normal; integers [0, 1] whatever the fill; bool ignores ranges.
ValueRange DefaultValueRange(DType dtype, Fill fill);

// InvalidArgument when a uniform fill of an integer dtype has no value in `range` (after rounding
// lo up, hi down and clamping both to the dtype's limits). Other combinations are always valid.
Status CheckFillRange(DType dtype, Fill fill, const ValueRange& range);

// Overwrites every element of `tensor`. Draws come from `prng` in element order, one Uniform,
// UniformInt, Normal or NextU64 (bool) call per element; zeros and ones draw nothing.
// REQUIRES: CheckFillRange(tensor.dtype(), fill, range) is OK.
void FillTensor(Tensor& tensor, Fill fill, const ValueRange& range, Prng& prng);

}  // namespace convgate::inputs
