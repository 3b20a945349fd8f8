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

// One output of one sample compared (compare::CompareTensors under the output's policy) and
// judged (JudgeCheck). With `target` null (the target lacks the output) the check is left
// unjudged and unpassed, for the caller to say why.
OutputCheck CheckOutput(int sample, const std::string& output, const Tensor& source,
                        const Tensor* target, const compare::Policy& policy);

// The dtype of a TensorComparison description ("float16[1, 10]" -> float16); nullopt if unknown.
std::optional<DType> DTypeOfDescription(const std::string& description);

}  // namespace convgate::gate::internal
