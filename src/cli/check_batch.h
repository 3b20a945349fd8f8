// `convgate check` of a batch result: every job re-judged (check_batch.cc).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"

namespace convgate::cli {

// The last line of a console text: the verdict sentence a re-judged report ends with.
std::string LastLine(const std::string& text);

// The folder of one job of a batch summary (a "jobs" element) inside `batch_folder`.
std::filesystem::path JobFolder(const std::filesystem::path& batch_folder,
                                const nlohmann::json& job);

// A batch result folder (holding summary.json), or a summary.json.
bool IsBatchResult(const std::filesystem::path& path);

// Each compare and verify job of the batch at `path` re-judged under `policy` (the job's
// report.json, as `check REPORT.json` does), a table of each job's verdict then and now (or
// --json: one object per job), and with --out each re-judged job's result files in OUT/<id>/.
// run jobs compared nothing and are listed as not re-judged. Exit 0 when every re-judged job
// passes, 1 when one fails, 3 when one cannot be re-judged (its report missing or recording an
// error) or the summary cannot be read.
ExitCode CheckBatchResult(const std::filesystem::path& path, const compare::Policy& policy,
                          const OutputOptions& output, report::Invocation& invocation);

// A pipeline's report.json (`report`, already parsed; `path` names it): each node's replayed and
// swapped-in target and the pipeline's outputs re-judged under `policy`, with a table of each
// (or --json). The exit code follows the outputs (and the nodes when the pipeline ran --strict),
// as the pipeline's did; 3 when a comparison cannot be read back.
ExitCode CheckPipelineResult(const nlohmann::json& report, const std::string& path,
                             const compare::Policy& policy, const OutputOptions& output,
                             report::Invocation& invocation);

}  // namespace convgate::cli
