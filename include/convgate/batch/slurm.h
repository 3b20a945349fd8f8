// `convgate batch MANIFEST --slurm`: the batch spread over a Slurm job array. Task i of N runs
// `convgate batch MANIFEST --shard i/N --store URL --out DIR --quiet` (the --shard contract of
// batch.h), every task writing into one shared store; the submitting convgate then waits for the
// array by polling squeue (sbatch --wait polls the controller only every ~10 s) and merges the
// summary from the store (slurm_summary.h).
//
// Slurm is driven through its command-line clients (sbatch, squeue, scontrol), found on PATH, the
// way a user would: no libslurm, so any cluster's client version works and a machine without
// Slurm still builds and runs every other command.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::batch {

// Tasks when --tasks is not given: min(entries, 4). Four keeps a small cluster's queue short and
// already gives a nightly zoo of dozens of models a 4x spread; larger fleets say --tasks.
inline constexpr int kDefaultSlurmTasks = 4;

struct SlurmArrayOptions {
  std::string convgate;            // absolute path of the binary every task runs
  std::filesystem::path manifest;  // absolute
  std::filesystem::path out_dir;   // absolute; the script and the task logs go to out_dir/slurm
  std::string store;               // a database URL as given, or an absolute SQLite path
  int tasks = 1;                   // the array's size (>= 1)
  bool resume = false;             // passed to every task
  bool skip_errors = false;        // passed to every task (with resume)
  double timeout_seconds = 0.0;    // per job, passed to every task when > 0
};

// The array's size: `requested` when > 0, else min(entries, kDefaultSlurmTasks), at least 1.
int SlurmTaskCount(int requested, int entries);

// Refuses (InvalidArgument) sbatch arguments that would break the contract between the script and
// the summary: --array (use --tasks), --output/--error (the logs must be where the summary reads
// them), --parsable, --wait and --wrap.
Status CheckSbatchArgs(const std::vector<std::string>& args);

// The job-array script: #SBATCH lines for the array (0..tasks-1), the job name and the logs
// (out_dir/slurm/%A_%a.log, stdout and stderr together), then the task's convgate command with
// every path absolute and quoted for the shell. Each task runs its jobs with -j
// $SLURM_CPUS_PER_TASK (1 unless --cpus-per-task was asked for).
std::string SbatchScript(const SlurmArrayOptions& options);

// The log file of one task: out_dir/slurm/<job id>_<task>.log.
std::filesystem::path SlurmTaskLog(const std::filesystem::path& out_dir, const std::string& job_id,
                                   int task);

// `sbatch --parsable ARGS SCRIPT`: the job id. NotFound when sbatch is not on PATH; Unavailable
// with sbatch's own message when it refuses the job.
Result<std::string> SubmitSlurmArray(const std::filesystem::path& script,
                                     const std::vector<std::string>& sbatch_args);

// One task of an array as squeue or scontrol show it. A pending range ("2-3") is one entry with
// task -1 and `tasks` holding the range text.
struct SlurmTaskState {
  int task = -1;
  std::string tasks;      // squeue's %K: "3", or "0-3" for tasks not started yet
  std::string state;      // "PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", ...
  std::string exit_code;  // scontrol's "1:0" (exit code:signal); "" from squeue
  std::string reason;     // scontrol's Reason ("NonZeroExitCode"), "" from squeue
};

// True for the states a task never leaves (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL,
// OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE).
bool SlurmStateIsFinal(const std::string& state);

// `squeue -h -j ID -t all -o '%K|%T'` parsed. Lines that do not have the form are skipped.
std::vector<SlurmTaskState> ParseSqueue(const std::string& text);
// `scontrol -o show job ID` parsed: one task per line (ArrayTaskId, JobState, ExitCode, Reason).
std::vector<SlurmTaskState> ParseScontrol(const std::string& text);

// The array's tasks now (squeue). An array Slurm no longer knows (finished longer ago than the
// cluster's MinJobAge) is an empty list, not an error. NotFound when squeue is not on PATH;
// Unavailable with squeue's message when it fails otherwise.
Result<std::vector<SlurmTaskState>> QuerySlurmArray(const std::string& job_id);

// The finished tasks with their exit codes (scontrol); empty when Slurm no longer knows the job.
Result<std::vector<SlurmTaskState>> ShowSlurmArray(const std::string& job_id);

}  // namespace convgate::batch
