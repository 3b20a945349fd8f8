// The summary of a batch spread over a Slurm array, merged from the shared store: each task's
// run is its own run row, so the merge goes by entry instead: for every entry of the manifest,
// the latest job recorded with its resume key (EntryKey) — exactly what `--resume` counts as done.
// An entry without one is missing, with the task that should have run it (ShardHash % tasks).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/batch/manifest.h"
#include "convgate/batch/slurm.h"
#include "convgate/core/exit_code.h"
#include "convgate/store/store.h"

namespace convgate::batch {

// The resume key of every entry (in manifest order), from the pre-flight checks of its files on
// this machine: the same keys the tasks compute when the files are on a filesystem both see.
std::vector<std::string> ManifestEntryKeys(const Manifest& manifest);

// The latest job per resume key among the jobs finished at or after `since` (ISO 8601; "" for
// every job the store holds). Only keys in `keys` are kept.
Result<std::map<std::string, store::JobRecord>> LatestJobsByKey(
    store::Store& store, const std::vector<std::string>& keys, const std::string& since);

struct SlurmMissingEntry {
  std::string id;
  int task = 0;  // the array task whose shard holds the entry
};

// A task that did not end as a batch ends (exit 0, 1 or 3), or whose share is missing entries:
// its state, exit code and the last lines of its log.
struct SlurmTaskProblem {
  int task = 0;
  std::string state;      // "FAILED", "CANCELLED", ...; "unknown" when Slurm no longer knows it
  std::string exit_code;  // "137:0", "0:9"; "" when unknown
  std::string reason;
  int missing = 0;       // its entries without a result
  std::string log;       // the log file
  std::string log_tail;  // its last lines, "" when unreadable
};

struct SlurmSummary {
  std::string manifest;
  std::string store;
  std::string job_id;
  int tasks = 0;
  int entries = 0;  // in the manifest
  int passed = 0;
  int failed = 0;
  int errors = 0;
  std::map<std::string, int> errors_by_category;
  std::vector<store::JobRecord> jobs;  // the recorded entries, in manifest order
  std::map<std::string, int> task_of;  // entry id -> the array task whose shard holds it
  std::vector<SlurmMissingEntry> missing;
  std::vector<SlurmTaskState> task_states;  // as scontrol saw them at the end
  std::vector<SlurmTaskProblem> task_problems;
  double wall_seconds = 0.0;
  // The local batch's rules (0 all passed, 1 a gate failed, 3 errors and none failed) with a
  // missing entry counting as an error.
  ExitCode exit_code = ExitCode::kPassed;
};

// The summary of `manifest` from the latest jobs (LatestJobsByKey) and the tasks' final states.
// Reads the logs (SlurmTaskLog under out_dir) of the tasks with a problem.
SlurmSummary MergeSlurmSummary(const Manifest& manifest, const std::vector<std::string>& keys,
                               const std::map<std::string, store::JobRecord>& latest,
                               const std::vector<SlurmTaskState>& task_states,
                               const std::filesystem::path& out_dir, const std::string& job_id,
                               int tasks);

nlohmann::json SlurmSummaryJson(const SlurmSummary& summary);
// The table printed at the end: one line per entry (its task, verdict, error), the tasks with a
// problem and their log tails, then the totals.
std::string SlurmSummaryText(const SlurmSummary& summary);

}  // namespace convgate::batch
