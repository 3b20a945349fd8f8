#include "cli/batch_slurm.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/command.h"
#include "cli/flag_groups.h"
#include "convgate/batch/slurm.h"
#include "convgate/batch/slurm_summary.h"
#include "convgate/core/file_util.h"
#include "convgate/core/interrupt.h"
#include "convgate/core/units.h"
#include "convgate/report/json_text.h"
#include "convgate/store/location.h"

namespace convgate::cli {
namespace {

namespace fs = std::filesystem;

// Store::Open's own reading of the location: only an SQLite path is made absolute or warned about
// (a libpq keyword string such as "host=db dbname=convgate" holds no "://" but is no path).
bool IsSqlitePath(const std::string& store) {
  return store::StoreBackendOf(store) == store::StoreBackend::kSqlite;
}

// Every path a task sees must not depend on the directory it starts in.
Result<batch::SlurmArrayOptions> ArrayOptions(const batch::Manifest& manifest,
                                              const batch::BatchOptions& batch, int tasks) {
  batch::SlurmArrayOptions options;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return Status::Unavailable("cannot find this convgate's own path: " + ec.message());
  options.convgate = self.string();
  options.manifest = fs::absolute(manifest.path).lexically_normal();
  options.out_dir = fs::absolute(batch.out_dir).lexically_normal();
  options.store = IsSqlitePath(batch.store_location)
                      ? fs::absolute(batch.store_location).lexically_normal().string()
                      : batch.store_location;
  options.tasks = tasks;
  options.resume = batch.resume;
  options.skip_errors = batch.skip_errors;
  options.timeout_seconds = batch.timeout_seconds;
  return options;
}

// "3 running, 1 pending, 4 done" from squeue's lines (a pending range counts its tasks).
std::string TaskCounts(const std::vector<batch::SlurmTaskState>& states, int* unfinished) {
  std::map<std::string, int> counts;
  *unfinished = 0;
  for (const batch::SlurmTaskState& state : states) {
    int count = 1;
    const size_t dash = state.tasks.find('-');
    if (state.task < 0 && dash != std::string::npos) {
      // "2-3" (a "%1" throttle suffix or a ",5" list is rare enough to count as one).
      try {
        count = std::stoi(state.tasks.substr(dash + 1)) - std::stoi(state.tasks) + 1;
      } catch (const std::exception&) {
        count = 1;
      }
    }
    const bool done = batch::SlurmStateIsFinal(state.state);
    if (!done) *unfinished += count;
    counts[done ? "done" : state.state == "RUNNING" ? "running" : "pending"] += count;
  }
  std::string text;
  for (const char* word : {"running", "pending", "done"}) {
    if (counts.count(word)) {
      text += (text.empty() ? "" : ", ") + std::to_string(counts[word]) + " " + word;
    }
  }
  return text.empty() ? "none listed" : text;
}

// squeue failures in a row before the wait gives up: with the client's own 60 s timeout, several
// minutes of a controller that does not answer.
constexpr int kMaxFailedPolls = 5;

class SlurmWait {
 public:
  SlurmWait(store::Store& store, std::string job_id, std::string since, bool quiet)
      : store_(store), job_id_(std::move(job_id)), since_(std::move(since)), quiet_(quiet) {}

  // Polls until every task has ended. Unavailable when squeue or the store fail; the interrupt's
  // status when convgate is interrupted.
  Status Run(const std::vector<std::string>& keys, double poll_seconds) {
    const auto started = std::chrono::steady_clock::now();
    std::string last_line;
    while (true) {
      Result<std::vector<batch::SlurmTaskState>> states = batch::QuerySlurmArray(job_id_);
      if (!states.ok()) {
        // A busy controller times out now and then; only one that stays away ends the wait.
        if (states.status().code() == StatusCode::kNotFound || ++failed_polls_ >= kMaxFailedPolls) {
          return states.status();
        }
        if (!quiet_) std::cerr << ForTerminal("convgate: " + states.status().message()) << "\n";
        if (!SleepUnlessInterrupted(poll_seconds)) {
          return InterruptedStatus("waiting for Slurm job " + job_id_);
        }
        continue;
      }
      failed_polls_ = 0;
      CONVGATE_ASSIGN_OR_RETURN(const auto latest, batch::LatestJobsByKey(store_, keys, since_));
      int unfinished = 0;
      const std::string tasks = TaskCounts(*states, &unfinished);
      const std::string line = "[slurm job " + job_id_ + "] " + std::to_string(latest.size()) +
                               "/" + std::to_string(keys.size()) +
                               " entries recorded; tasks: " + tasks;
      // A line when something changed, not one per poll: stderr is often a log file.
      if (!quiet_ && line != last_line) {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::cerr << ForTerminal(line + "; " + FormatSeconds(seconds)) << "\n";
        last_line = line;
      }
      if (unfinished == 0) return Status::OK();
      if (!SleepUnlessInterrupted(poll_seconds)) {
        return InterruptedStatus("waiting for Slurm job " + job_id_);
      }
    }
  }

 private:
  store::Store& store_;
  std::string job_id_;
  std::string since_;
  bool quiet_;
  int failed_polls_ = 0;
};

ExitCode PrintSubmitted(const std::string& job_id, int tasks, const batch::SlurmArrayOptions& array,
                        bool json) {
  const std::string history = "convgate history --store '" + array.store + "'";
  const std::string resume = "convgate batch '" + array.manifest.string() + "' --store '" +
                             array.store + "' --out '" + array.out_dir.string() + "' --resume";
  if (json) {
    const nlohmann::json submitted = {{"slurm_job", job_id},
                                      {"tasks", tasks},
                                      {"script", (array.out_dir / "slurm/batch.sbatch").string()},
                                      {"store", array.store},
                                      {"history", history},
                                      {"resume", resume}};
    std::cout << report::DumpJson(submitted, 2) << "\n";
    return ExitCode::kPassed;
  }
  std::cout << ForTerminal(
      "Slurm job " + job_id + " submitted (" + std::to_string(tasks) +
      " tasks); not waiting for it.\n"
      "Results as the tasks record them: " +
      history + "\nOnce it has ended, the entries it did not record run with: " + resume + "\n");
  return ExitCode::kPassed;
}

// The SQLite store works for one machine or a filesystem every node mounts; say so, since a
// node-local path silently splits the results.
void WarnAboutSqlite(const std::string& store) {
  if (!IsSqlitePath(store)) return;
  std::cerr << ForTerminal("convgate: warning: the store " + store +
                           " is a SQLite file: every Slurm node must see it on a shared "
                           "filesystem (one that supports SQLite's locks); for many machines use "
                           "a PostgreSQL store (--store postgresql://...)")
            << "\n";
}

Result<std::string> WriteAndSubmit(const batch::SlurmArrayOptions& array,
                                   const SlurmCliOptions& slurm) {
  const fs::path folder = array.out_dir / "slurm";
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return Status::Unavailable("cannot create " + folder.string() + ": " + ec.message());
  const fs::path script = folder / "batch.sbatch";
  CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(script, batch::SbatchScript(array)));
  return batch::SubmitSlurmArray(script, slurm.sbatch_args);
}

ExitCode PrintSummary(const batch::SlurmSummary& summary, const fs::path& out_dir, bool json) {
  const nlohmann::json summary_json = batch::SlurmSummaryJson(summary);
  // The tasks each wrote their share's summary.json here; the merged one replaces them.
  Status written =
      WriteFileAtomic(out_dir / "summary.json", report::DumpJson(summary_json, 2) + "\n");
  std::cout << (json ? report::DumpJson(summary_json, 2) + "\n"
                     : ForTerminal(batch::SlurmSummaryText(summary)));
  if (!written.ok()) return ReportError(gate::Stage::kWrite, written);
  return summary.exit_code;
}

}  // namespace

void AddSlurmFlags(FlagSet& flags, SlurmCliOptions& options) {
  flags.SetGroup("Slurm");
  Flag tasks = IntegerFlag("--tasks", "N", "The array's size with --slurm", {"4", "16"}, 1, 10000,
                           options.tasks);
  tasks.default_text = "min(entries, " + std::to_string(batch::kDefaultSlurmTasks) + ")";
  flags.Add({
      SwitchFlag("--slurm",
                 "Run the batch as a Slurm job array: task I runs --shard I/N into the --store, "
                 "which every node must reach (a PostgreSQL URL, or SQLite on a shared "
                 "filesystem); then wait and print the summary merged from the store",
                 options.slurm),
      std::move(tasks),
      Flag{.name = "--sbatch-arg",
           .value_name = "ARG",
           .help = "One more sbatch option for the array, verbatim (repeatable); not --array, "
                   "--output, --error, --wait",
           .examples = {"--partition=debug", "--cpus-per-task=2"},
           .arity = FlagArity::kRepeated,
           .apply = [&options](const std::string& value) -> Status {
             CONVGATE_RETURN_IF_ERROR(batch::CheckSbatchArgs({value}));
             options.sbatch_args.push_back(value);
             return Status::OK();
           }},
      SwitchFlag("--no-wait",
                 "With --slurm: print the job id and how to see the results, and return at once",
                 options.no_wait),
  });
  flags.SetGroup("Options");
  flags.AddCheck([&options](const FlagSet& given) -> Status {
    if (!options.slurm) {
      for (const char* name : {"--tasks", "--sbatch-arg", "--no-wait"}) {
        if (given.Given(name)) return Status::InvalidArgument(std::string(name) + " needs --slurm");
      }
      return Status::OK();
    }
    if (given.Given("--shard")) {
      return Status::InvalidArgument(
          "--shard and --slurm do not go together: --slurm gives each array task its shard");
    }
    if (given.Given("--jobs")) {
      return Status::InvalidArgument(
          "-j does not apply with --slurm: each task runs as many jobs as it has CPUs "
          "(--sbatch-arg=--cpus-per-task=N)");
    }
    return Status::OK();
  });
}

ExitCode RunSlurmBatch(const batch::Manifest& given, const SlurmCliOptions& slurm,
                       const batch::BatchOptions& batch, bool quiet, bool json) {
  const auto started = std::chrono::steady_clock::now();
  const int tasks = batch::SlurmTaskCount(slurm.tasks, static_cast<int>(given.entries.size()));
  Result<batch::SlurmArrayOptions> array = ArrayOptions(given, batch, tasks);
  if (!array.ok()) return ReportError(gate::Stage::kInternal, array.status());
  // Read again as the tasks read it, by its absolute path: an entry's key covers its paths as
  // resolved against the manifest's folder, so a manifest given as a relative path would
  // otherwise give other keys than the tasks record, and every entry would look missing.
  Result<batch::Manifest> manifest = batch::ReadManifest(array->manifest);
  if (!manifest.ok()) return ReportError(gate::Stage::kLoad, manifest.status());
  WarnAboutSqlite(array->store);
  // Opened before submitting: a store that cannot be reached fails here, not in every task, and
  // its schema is created once instead of by tasks racing.
  Result<std::unique_ptr<store::Store>> store = store::Store::Open({array->store});
  if (!store.ok()) return ReportError(gate::Stage::kLoad, store.status());
  // Without --resume the summary counts only this array's jobs (a task that died must show its
  // entries missing, not an older result); with it, earlier results count, as the tasks skip them.
  const std::string since = batch.resume ? "" : batch::NowIso8601();
  Result<std::string> job_id = WriteAndSubmit(*array, slurm);
  if (!job_id.ok()) return ReportError(gate::Stage::kRun, job_id.status());
  if (!quiet) {
    std::cerr << ForTerminal("Submitted Slurm job " + *job_id + " (" + std::to_string(tasks) +
                             " tasks): script " + (array->out_dir / "slurm/batch.sbatch").string() +
                             ", logs " + (array->out_dir / "slurm").string() + "/" + *job_id +
                             "_<task>.log")
              << "\n";
  }
  if (slurm.no_wait) return PrintSubmitted(*job_id, tasks, *array, json);

  // The keys are computed while the first tasks start.
  const std::vector<std::string> keys = batch::ManifestEntryKeys(*manifest);
  SlurmWait wait(**store, *job_id, since, quiet);
  Status waited = wait.Run(keys, slurm.poll_seconds);
  if (!waited.ok()) {
    if (Interrupted()) {
      std::cerr << "convgate: stopped waiting; Slurm job " << *job_id << " keeps running (scancel "
                << *job_id << " stops it)\n";
      return static_cast<ExitCode>(128 + InterruptSignal());
    }
    return ReportError(gate::Stage::kRun, waited);
  }
  Result<std::vector<batch::SlurmTaskState>> states = batch::ShowSlurmArray(*job_id);
  if (!states.ok()) {
    std::cerr << ForTerminal("convgate: warning: the tasks' exit codes are unknown: " +
                             states.status().message())
              << "\n";
  }
  Result<std::map<std::string, store::JobRecord>> latest =
      batch::LatestJobsByKey(**store, keys, since);
  if (!latest.ok()) return ReportError(gate::Stage::kLoad, latest.status());
  batch::SlurmSummary summary = batch::MergeSlurmSummary(
      *manifest, keys, *latest, states.ok() ? *states : std::vector<batch::SlurmTaskState>{},
      array->out_dir, *job_id, tasks);
  summary.store = array->store;
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return PrintSummary(summary, array->out_dir, json);
}

}  // namespace convgate::cli
