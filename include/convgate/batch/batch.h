// `convgate batch`: every entry of a manifest run as its own convgate process (verify, compare or
// run), up to `jobs` at once, each with a timeout, each result recorded in the store as it ends.
//
// Isolation: a job that crashes, hangs or is killed is that job's error (its signal, the tail of
// its stderr, its duration), never the batch's. Jobs are children of the batch and die with it
// (core/subprocess.h), so a batch killed with SIGKILL leaves no job running and, because each job
// is recorded in one transaction after it ended, no partial row: --resume then runs exactly the
// entries without a verdict (no job, or an error as their latest; --skip-errors keeps errors).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "convgate/batch/cache_cleanup.h"
#include "convgate/batch/manifest.h"
#include "convgate/core/exit_code.h"
#include "convgate/core/verdict.h"
#include "convgate/store/store.h"

namespace convgate::batch {

struct BatchOptions {
  std::filesystem::path out_dir;  // per-job folders <out>/<entry id>, summary.json
  int jobs = 1;                   // at once; the CLI's default is the number of cores
  // Skip entries whose key already has a verdict in the store: its latest job passed or failed.
  // An entry whose latest job is an error (it could not load, convert or run, crashed, timed out)
  // has no verdict and runs again, unless skip_errors.
  bool resume = false;
  bool skip_errors = false;  // with resume: skip entries whose latest job is an error too
  int shard_index = 0;       // this process takes entries with ShardHash(id) % count == index
  int shard_count = 1;
  // Per job unless the entry sets its own: long enough for a conversion of a mid-sized model, short
  // enough that a hung job does not hold a nightly batch for hours.
  double timeout_seconds = 600.0;
  // The convgate binary each job runs: this one (Linux's /proc/self/exe), so jobs use exactly the
  // batch's version whatever PATH says.
  std::string convgate = "/proc/self/exe";
  std::string store_location;     // for the summary
  std::vector<std::string> argv;  // the batch's own command line, for the run row
  // > 0: each job runs with --threads job_threads unless its entry sets --threads itself
  // (JobThreads: the cores shared out between the jobs running at once).
  int job_threads = 0;
  // Appended to every compare and verify job's command line (batch --benchmark and its flags:
  // each job then times both models and its figures go into the store beside its verdict).
  std::vector<std::string> job_flags;
  // > 0: each job's RLIMIT_AS (--job-memory); a job that runs out is category "oom".
  int64_t job_memory_bytes = 0;
  // Attempts per job for transient failures (batch/job_policy.h IsTransientJobFailure); 1: none.
  int max_attempts = 2;
  // After the jobs (unless interrupted): prune the conversion cache with these (cache_cleanup.h).
  std::optional<convert::PruneOptions> cache_cleanup;
  // Called (serialised) when a job's process starts and when it ends, for the progress line.
  std::function<void(const std::string& entry_id, int total)> on_start;
};

struct BatchSummary {
  std::string manifest;
  std::string store;
  int64_t run_id = 0;
  int manifest_entries = 0;  // in the whole manifest
  int entries = 0;           // in this shard
  int passed = 0;
  int failed = 0;
  int errors = 0;
  std::map<std::string, int> errors_by_category;
  int skipped_done = 0;
  // Of the skipped entries, the verdicts recorded earlier (they count in the exit code); "error"
  // only with skip_errors.
  std::map<Verdict, int> skipped_verdicts;
  bool interrupted = false;
  double wall_seconds = 0.0;
  ExitCode exit_code = ExitCode::kPassed;
  std::vector<store::JobRecord> jobs;  // this run's, in the order they finished
  // Attempts by entry id, for jobs that needed more than one; `retried` counts them.
  std::map<std::string, int> attempts;
  int retried = 0;
  CacheCleanup cache_cleanup;
};

// The inference threads each of `jobs` concurrent jobs gets on the `cores` CPUs this process may
// use (UsableCores) of the machine's `machine_cores`: max(1, cores / jobs), except one job at a
// time on the whole machine, which gets 0 (the runtime's choice). ONNX Runtime's default pool
// takes every core of the machine and spins while waiting, so two jobs with two threads each on two
// cores run at 1.6x instead of 2x of one job at a time (bench/batch.sh), and a Slurm task given
// one CPU of a shared node would spin on all of them.
int JobThreads(int jobs, int cores, int machine_cores);

// Called (serialised) after each job is recorded, for progress lines.
using JobCallback = std::function<void(const store::JobRecord& job, int done, int total)>;

// Runs the shard of `manifest` the options select. Errors (a store that cannot be written) are
// Unavailable naming the store; job failures are results in the summary.
Result<BatchSummary> RunBatch(const Manifest& manifest, const BatchOptions& options,
                              store::Store& store, const JobCallback& on_job);

// Reads a finished job's <dir>/report.json (and verify_result.json) into `job`: per-output figures
// and the conversion path. Missing or malformed files leave `job` as it was.
void ReadJobResults(const std::filesystem::path& dir, const std::string& command,
                    store::JobRecord& job);
// The same from the documents themselves (either may be null): a single gate's --store record.
void ReadJobJson(const nlohmann::json* verify_result, const nlohmann::json* report,
                 const std::string& command, store::JobRecord& job);

nlohmann::json SummaryJson(const BatchSummary& summary);
// One job as summary.json lists it (a local batch's and the merged Slurm summary's alike), from
// the job record's field list (store/job_fields.h); "model_origins" is the parsed document.
nlohmann::json JobJson(const store::JobRecord& job);
// A job's row in the console tables (a local batch's and the merged Slurm summary's alike): its
// verdict as "PASS", "FAIL" or "ERROR", its seconds ("1.25"), and its error (the category and
// the first line of the text, at most 100 characters).
std::string VerdictWord(Verdict verdict);
std::string JobSecondsText(double seconds);
std::string JobErrorText(const store::JobRecord& job);
// The table printed at the end: one line per job run, then the totals.
std::string SummaryText(const BatchSummary& summary);

// "2026-11-26T17:02:03Z".
std::string NowIso8601();

// This machine's host name for the run rows ("unknown" when gethostname fails).
std::string HostName();

}  // namespace convgate::batch
