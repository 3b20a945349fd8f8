// `convgate check`: a saved compare report judged again under a new policy, without re-running
// either side.
#pragma once

#include <string>

#include "convgate/compare/policy.h"
#include "convgate/gate/results.h"

namespace convgate::gate {

// Re-judges every output check of `saved` (a compare report read back with
// report::ReadCompareReport) under saved.policy with `overlay` layered on (Policy::MergeFrom):
// knobs the overlay leaves unset keep the saved report's values. Each output's policy is resolved
// again from its stored dtypes. Values come from the stored statistics and error summaries: exact
// where they hold the value, bracketed otherwise (OutputCheck::verdict_exact, ::indeterminate; an
// indeterminate check fails). Missing-output checks and structure failures stay as saved; hints
// are recomputed. Per-node validation is dropped (its tensors are not in the report). An overlay
// setting for an output neither side has is a Stage::kFlags error. `from` (the saved report's path)
// is recorded as rejudged_from.
CompareReport RejudgeCompareReport(CompareReport saved, const compare::Policy& overlay,
                                   std::string from);

}  // namespace convgate::gate
