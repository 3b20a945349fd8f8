// Reading a compare report.json back, for `convgate check` (re-judging without re-running).
#pragma once

#include <filesystem>
#include <string_view>

#include "convgate/core/status.h"
#include "convgate/gate/results.h"
#include "convgate/report/report.h"

namespace convgate::report {

// The CompareReport a report.json written by `convgate compare` (or `convgate check`) was
// rendered from, as far as judging needs it: both sides, the inputs, the policy, structure
// failures, and every check with its full comparison (statistics, metrics, error summary, the
// comparison's own failure sentences), and per-node validation when the report has it. Verdicts
// are read but meant to be recomputed
// (gate::RejudgeCompareReport).
// Errors, each naming the file: NotFound when it is missing; DataLoss when it is not JSON, not a
// compare report, of another schema_version, records an error (nothing was compared), or a field
// is missing or malformed ("r.json: results[3].stats.errors.max_abs_error: expected a number").
// With `header`, the report's header is read into it too: `check` keeps the saved report's
// model_origins, since the models it re-judges are those.
Result<gate::CompareReport> ReadCompareReport(const std::filesystem::path& path,
                                              Invocation* header = nullptr);

// The same on text already read (for fuzzing, and reports received over a pipe); `what` names it
// in messages.
Result<gate::CompareReport> ParseCompareReport(std::string_view text, std::string_view what,
                                               Invocation* header = nullptr);

// The report.json of any workflow (Report: gate::RunReport, CompareReport, VerifyReport,
// ReduceReport) read back whole, through the descriptions it was written with, and its header into
// `*invocation` when given; writing what is read gives the same report.json. Neither the command
// nor the verdict is checked. What the JSON holds only for people (the rules, the summaries, the
// host, exit codes, the repetitions of a node's name) is not read: it follows from the rest or
// from the machine. Errors as ParseCompareReport's.
template <typename Report>
Result<Report> ParseReport(std::string_view text, std::string_view what,
                           Invocation* invocation = nullptr);

}  // namespace convgate::report
