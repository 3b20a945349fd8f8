#include "convgate/batch/slurm_summary.h"

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "convgate/batch/batch.h"
#include "convgate/batch/preflight.h"
#include "convgate/core/subprocess.h"
#include "convgate/core/text_table.h"
#include "convgate/core/units.h"

namespace convgate::batch {
namespace {

// Enough of a task's log to show why it died (a stack of error context, a signal line from
// slurmstepd) without burying the summary.
constexpr size_t kLogTailLines = 15;
// A log read for its tail: the last 64 KB hold far more than kLogTailLines lines.
constexpr std::streamoff kLogTailBytes = 64 * 1024;

std::string ReadTail(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(size > kLogTailBytes ? size - kLogTailBytes : 0);
  std::ostringstream text;
  text << in.rdbuf();
  return TailLines(text.str(), kLogTailLines);
}

// How a batch task ends normally: exit 0 (passed), 1 (a gate failed) or 3 (a job could not run),
// which Slurm shows as COMPLETED, or FAILED with exit code 1:0 / 3:0.
bool EndedAsABatch(const SlurmTaskState& state) {
  if (state.state == "COMPLETED") return true;
  return state.state == "FAILED" && (state.exit_code == "1:0" || state.exit_code == "3:0");
}

const SlurmTaskState* FindTask(const std::vector<SlurmTaskState>& states, int task) {
  for (const SlurmTaskState& state : states) {
    if (state.task == task) return &state;
  }
  return nullptr;
}

void Count(const store::JobRecord& job, SlurmSummary& summary) {
  if (job.verdict == Verdict::kPass) ++summary.passed;
  if (job.verdict == Verdict::kFail) ++summary.failed;
  if (job.verdict == Verdict::kError) {
    ++summary.errors;
    ++summary.errors_by_category[job.error_category];
  }
}

void AddTaskProblems(const std::filesystem::path& out_dir, SlurmSummary& summary) {
  std::map<int, int> missing_by_task;
  for (const SlurmMissingEntry& entry : summary.missing) ++missing_by_task[entry.task];
  for (int task = 0; task < summary.tasks; ++task) {
    const SlurmTaskState* state = FindTask(summary.task_states, task);
    const int missing = missing_by_task.count(task) ? missing_by_task[task] : 0;
    if (missing == 0 && (state == nullptr || EndedAsABatch(*state))) continue;
    SlurmTaskProblem problem;
    problem.task = task;
    problem.state = state != nullptr ? state->state : "unknown";
    problem.exit_code = state != nullptr ? state->exit_code : "";
    problem.reason = state != nullptr ? state->reason : "";
    problem.missing = missing;
    const std::filesystem::path log = SlurmTaskLog(out_dir, summary.job_id, task);
    problem.log = log.string();
    problem.log_tail = ReadTail(log);
    summary.task_problems.push_back(std::move(problem));
  }
}

ExitCode ExitCodeOf(const SlurmSummary& summary) {
  if (summary.failed > 0) return ExitCode::kFailed;
  if (summary.errors > 0 || !summary.missing.empty()) return ExitCode::kCannotRun;
  return ExitCode::kPassed;
}

std::string TaskProblemText(const SlurmTaskProblem& problem) {
  std::string text = "task " + std::to_string(problem.task) + " ended " + problem.state;
  if (!problem.exit_code.empty()) text += ", exit code " + problem.exit_code;
  if (!problem.reason.empty() && problem.reason != "None") text += " (" + problem.reason + ")";
  if (problem.missing > 0) {
    text += "; " + std::to_string(problem.missing) + " of its entries have no result";
  }
  if (problem.log_tail.empty()) return text + "; no log at " + problem.log + "\n";
  text += "; the end of " + problem.log + ":\n";
  std::istringstream lines(problem.log_tail);
  std::string line;
  while (std::getline(lines, line)) text += "  | " + line + "\n";
  return text;
}

std::string Totals(const SlurmSummary& summary) {
  std::string text = "entries " + std::to_string(summary.entries) + ": " +
                     std::to_string(summary.passed) + " passed, " + std::to_string(summary.failed) +
                     " failed, " + std::to_string(summary.errors) +
                     (summary.errors == 1 ? " error" : " errors");
  if (!summary.errors_by_category.empty()) {
    std::string categories;
    for (const auto& [category, count] : summary.errors_by_category) {
      categories += (categories.empty() ? "" : ", ") + category + " " + std::to_string(count);
    }
    text += " (" + categories + ")";
  }
  text += ", " + std::to_string(summary.missing.size()) + " missing";
  return text + "; wall " + FormatSeconds(summary.wall_seconds) + "\n";
}

}  // namespace

std::vector<std::string> ManifestEntryKeys(const Manifest& manifest) {
  std::vector<std::string> keys;
  keys.reserve(manifest.entries.size());
  const std::string version = VersionText();
  for (const ManifestEntry& entry : manifest.entries) {
    keys.push_back(EntryKey(entry, CheckEntry(entry).files_sha256, version));
  }
  return keys;
}

Result<std::map<std::string, store::JobRecord>> LatestJobsByKey(
    store::Store& store, const std::vector<std::string>& keys, const std::string& since) {
  const std::set<std::string> wanted(keys.begin(), keys.end());
  store::HistoryQuery query;
  query.since = since;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<store::HistoryRow> rows, store.Jobs(query));
  std::map<std::string, store::JobRecord> latest;
  // Oldest first: a later job of a key replaces an earlier one.
  for (store::HistoryRow& row : rows) {
    if (wanted.count(row.job.entry_key)) latest[row.job.entry_key] = std::move(row.job);
  }
  return latest;
}

SlurmSummary MergeSlurmSummary(const Manifest& manifest, const std::vector<std::string>& keys,
                               const std::map<std::string, store::JobRecord>& latest,
                               const std::vector<SlurmTaskState>& task_states,
                               const std::filesystem::path& out_dir, const std::string& job_id,
                               int tasks) {
  SlurmSummary summary;
  summary.manifest = manifest.path.string();
  summary.job_id = job_id;
  summary.tasks = tasks;
  summary.entries = static_cast<int>(manifest.entries.size());
  summary.task_states = task_states;
  const std::vector<int> shard_of = ShardOfEntries(manifest.entries, tasks);
  for (size_t entry_idx = 0; entry_idx < manifest.entries.size(); ++entry_idx) {
    const ManifestEntry& entry = manifest.entries[entry_idx];
    summary.task_of[entry.id] = shard_of[entry_idx];
    const auto found = latest.find(keys.at(entry_idx));
    if (found == latest.end()) {
      summary.missing.push_back({entry.id, shard_of[entry_idx]});
      continue;
    }
    Count(found->second, summary);
    summary.jobs.push_back(found->second);
  }
  AddTaskProblems(out_dir, summary);
  summary.exit_code = ExitCodeOf(summary);
  return summary;
}

namespace {

// -1 for an id the summary did not shard (not in its manifest).
int TaskOf(const SlurmSummary& summary, const std::string& entry_id) {
  auto found = summary.task_of.find(entry_id);
  return found == summary.task_of.end() ? -1 : found->second;
}

}  // namespace

nlohmann::json SlurmSummaryJson(const SlurmSummary& summary) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const store::JobRecord& job : summary.jobs) {
    nlohmann::json row = JobJson(job);
    row["task"] = TaskOf(summary, job.entry_id);
    jobs.push_back(std::move(row));
  }
  nlohmann::json missing = nlohmann::json::array();
  for (const SlurmMissingEntry& entry : summary.missing) {
    missing.push_back({{"id", entry.id}, {"task", entry.task}});
  }
  nlohmann::json tasks = nlohmann::json::array();
  for (const SlurmTaskState& state : summary.task_states) {
    tasks.push_back({{"task", state.task},
                     {"state", state.state},
                     {"exit_code", state.exit_code},
                     {"reason", state.reason}});
  }
  nlohmann::json problems = nlohmann::json::array();
  for (const SlurmTaskProblem& problem : summary.task_problems) {
    problems.push_back({{"task", problem.task},
                        {"state", problem.state},
                        {"exit_code", problem.exit_code},
                        {"reason", problem.reason},
                        {"missing", problem.missing},
                        {"log", problem.log},
                        {"log_tail", problem.log_tail}});
  }
  return {{"manifest", summary.manifest},
          {"store", summary.store},
          {"slurm_job", summary.job_id},
          {"tasks", summary.tasks},
          {"entries", summary.entries},
          {"passed", summary.passed},
          {"failed", summary.failed},
          {"errors", summary.errors},
          {"errors_by_category", summary.errors_by_category},
          {"missing", missing},
          {"task_states", tasks},
          {"task_problems", problems},
          {"wall_seconds", summary.wall_seconds},
          {"exit_code", ToInt(summary.exit_code)},
          {"jobs", jobs}};
}

std::string SlurmSummaryText(const SlurmSummary& summary) {
  std::string text = "convgate batch " + summary.manifest + " --slurm  (Slurm job " +
                     summary.job_id + ", " + std::to_string(summary.tasks) + " tasks, store " +
                     summary.store + ")\n\n";
  TextTable table({"entry", "task", "verdict", "seconds", "error"});
  for (const store::JobRecord& job : summary.jobs) {
    table.AddRow({job.entry_id, std::to_string(TaskOf(summary, job.entry_id)),
                  VerdictWord(job.verdict), JobSecondsText(job.duration_seconds),
                  JobErrorText(job)});
  }
  for (const SlurmMissingEntry& entry : summary.missing) {
    table.AddRow(
        {entry.id, std::to_string(entry.task), "MISSING", "-",
         "no result in the store: task " + std::to_string(entry.task) + " did not record it"});
  }
  text += table.Render();
  text += "\n";
  for (const SlurmTaskProblem& problem : summary.task_problems) {
    text += TaskProblemText(problem) + "\n";
  }
  text += Totals(summary);
  if (summary.exit_code == ExitCode::kPassed) return text + "BATCH PASSED\n";
  if (summary.exit_code == ExitCode::kFailed) return text + "BATCH FAILED\n";
  return text + (summary.missing.empty()
                     ? "BATCH ERRORS: some jobs could not run\n"
                     : "BATCH ERRORS: entries are missing; rerun with --resume to run only them\n");
}

}  // namespace convgate::batch
