// Reading a compare report.json back, for `convgate check` (re-judging without re-running).
#pragma once

#include <filesystem>
#include <string_view>

#include "convgate/core/status.h"
#include "convgate/gate/results.h"

namespace convgate::report {

// The CompareReport a report.json written by `convgate compare` (or `convgate check`) was
// rendered from, as far as judging needs it: both sides, the inputs, the policy, structure
// failures, and every check with its full comparison (statistics, metrics, error summary, the
// comparison's own failure sentences). Verdicts are read but meant to be recomputed
// (gate::RejudgeCompareReport).
// Errors, each naming the file: NotFound when it is missing; DataLoss when it is not JSON, not a
// compare report, of another schema_version, records an error (nothing was compared), or a field
// is missing or malformed ("r.json: results[3].stats.errors.max_abs_error: expected a number").
Result<gate::CompareReport> ReadCompareReport(const std::filesystem::path& path);

// The same on text already read (for fuzzing, and reports received over a pipe); `what` names it
// in messages.
Result<gate::CompareReport> ParseCompareReport(std::string_view text, std::string_view what);

}  // namespace convgate::report
