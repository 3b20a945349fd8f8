// Copies of tensors that may fail: Tensor::Clone throws std::bad_alloc when its memory cannot be
// allocated (as operator new does; main reports it as "out of memory", exit 3), these return it
// as a Status naming the bytes and the tensor. Code that holds many copies (a pipeline's steps, a
// feedback loop's state) uses these, so running out ends in a message that names the step.
#pragma once

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate {

// Unavailable ("cannot allocate N bytes for a float32[...] tensor") when the copy's memory
// cannot be allocated.
Result<Tensor> TryClone(const Tensor& tensor);
// The same for every tensor of `tensors`, the failing one named.
Result<TensorMap> TryClone(const TensorMap& tensors);

// A floating tensor as another floating dtype (float32 -> float16: round to nearest even, values
// beyond the narrower range become +-Inf, as a runtime's Cast does). InvalidArgument unless both
// dtypes are floating.
Result<Tensor> CastFloating(const Tensor& tensor, DType dtype);

}  // namespace convgate
