// Judging a check: the comparison of one output of one sample under the tolerance policy, its
// verdict, the "what to try next" hints and the per-output aggregates. `compare` judges fresh
// comparisons, `check` comparisons read back from a report, and a pipeline (pipeline/validate.h)
// each node's outputs against its reference, all through these.
#pragma once

#include <string>
#include <vector>

#include "convgate/compare/policy.h"
#include "convgate/core/tensor.h"
#include "convgate/gate/results.h"

namespace convgate::gate {

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

// Replaces the hints of every failing check in `checks` (all samples compared, each judged): the
// tolerances to pass come from compare::TolerancesToPassUnder the check's policy.
void AttachHints(std::vector<OutputCheck>& checks);

// Per-output aggregates over samples (CompareReport::aggregates), in first-seen order.
std::vector<OutputAggregate> AggregateBySample(const std::vector<OutputCheck>& checks);

// Once every check of `report` is judged: hints on the failing ones (AttachHints) and the
// per-output aggregates (AggregateBySample).
void FinishChecks(CompareReport& report);

}  // namespace convgate::gate
