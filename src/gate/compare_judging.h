// Applying an OutputCheck's policy to its comparison: shared by `compare` (fresh comparisons,
// tensors at hand) and `check` (comparisons read back from a report).
#pragma once

#include <optional>
#include <string>

#include "convgate/core/dtype.h"
#include "convgate/core/tensor.h"
#include "convgate/gate/results.h"

namespace convgate::gate::internal {

// Sets check.passed, failures, notes, verdict_exact and indeterminate from compare::Judge applied
// to check.comparison under check.policy. With the tensors (`source` and `target` both non-null),
// a median or pNN policy is judged on exact percentiles computed from them. REQUIRES:
// check.comparison.
void JudgeCheck(OutputCheck& check, const Tensor* source, const Tensor* target);

// The dtype of a TensorComparison description ("float16[1, 10]" -> float16); nullopt if unknown.
std::optional<DType> DTypeOfDescription(const std::string& description);

}  // namespace convgate::gate::internal
