#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <thread>

#include "convgate/batch/batch.h"
#include "convgate/batch/job_policy.h"
#include "convgate/batch/preflight.h"
#include "convgate/core/subprocess.h"
#include "convgate/core/units.h"
#include "convgate/report/json_text.h"
#include "convgate/report/report.h"
#include "convgate/store/location.h"

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;

// The stderr lines kept in the store for a failed job: enough for a stack of error context,
// little enough that 100,000 job rows stay small.
constexpr size_t kStderrTailLines = 20;

// What ps shows for a job: /proc/self/exe is run (the batch's own binary, whatever happens to the
// file), but shown by the path it resolves to, so `ps` reads "/usr/bin/convgate verify ...".
std::string ShownBinary(const std::string& convgate) {
  if (convgate != "/proc/self/exe") return "";
  std::error_code ec;
  const fs::path real = fs::read_symlink(convgate, ec);
  return ec ? "convgate" : real.string();
}

struct PlannedJob {
  const ManifestEntry* entry;
  Preflight preflight;
  std::string key;
};

store::JobRecord BaseRecord(const PlannedJob& planned, const fs::path& result_dir) {
  const ManifestEntry& entry = *planned.entry;
  store::JobRecord job;
  job.entry_id = entry.id;
  job.entry_key = planned.key;
  job.model_id = entry.model_id;
  job.model_path = entry.source.string();
  job.model_sha256 = planned.preflight.model_sha256;
  job.model_type = planned.preflight.model_type.type;
  job.model_type_source = planned.preflight.model_type.source;
  job.command = entry.command;
  job.conversion = entry.Conversion();
  job.conversion_params = store::CanonicalParams(entry.Params());
  job.result_dir = result_dir.string();
  if (!planned.preflight.origins.empty()) {
    job.model_origin = report::DumpJson(report::ModelOriginsJson(planned.preflight.origins));
  }
  return job;
}

std::string SignalName(int signal) {
  const char* name = ::strsignal(signal);
  return name != nullptr ? name : "signal " + std::to_string(signal);
}

// Fills verdict, category and text from how the child ended.
void Classify(const SubprocessResult& result, store::JobRecord& job) {
  job.exit_code = result.exit_code;
  job.signal = result.signal;
  job.duration_seconds = result.seconds;
  const std::string tail = TailLines(result.stderr_tail, kStderrTailLines);
  if (result.timed_out) {
    job.verdict = Verdict::kError;
    job.error_category = "timeout";
    job.error_text = result.Describe() + (tail.empty() ? "" : "\n" + tail);
    return;
  }
  if (result.signal != 0) {
    job.verdict = Verdict::kError;
    // SIGKILL from outside the batch: the kernel's OOM killer or a memory limit, most often.
    job.error_category = result.signal == SIGKILL ? "killed" : "crash";
    job.error_text = result.Describe() + " (" + SignalName(result.signal) + ")" +
                     (tail.empty() ? "" : "\n" + tail);
    return;
  }
  if (result.exit_code == 0) {
    job.verdict = Verdict::kPass;
    return;
  }
  if (result.exit_code == 1) {
    job.verdict = Verdict::kFail;
    job.error_text = TailLines(result.stderr_tail, 3);
    return;
  }
  job.verdict = Verdict::kError;
  job.error_category = ErrorCategoryOfExit(result.exit_code);
  job.error_text = tail;
}

class Runner {
 public:
  Runner(const BatchOptions& options, store::Store& store, int64_t run_id,
         const JobCallback& on_job, BatchSummary& summary)
      : options_(options), store_(store), run_id_(run_id), on_job_(on_job), summary_(summary) {}

  Status Run(const std::vector<PlannedJob>& jobs) {
    total_ = static_cast<int>(jobs.size());
    // Jobs that failed their pre-flight checks are recorded without a process.
    std::vector<const PlannedJob*> runnable;
    for (const PlannedJob& planned : jobs) {
      if (planned.preflight.error_category.empty()) {
        runnable.push_back(&planned);
        continue;
      }
      store::JobRecord job = BaseRecord(planned, "");
      job.verdict = Verdict::kError;
      job.error_category = planned.preflight.error_category;
      job.error_text = planned.preflight.error_text;
      Record(std::move(job));
    }
    const int workers =
        std::max(1, std::min<int>(options_.jobs, static_cast<int>(runnable.size())));
    std::vector<std::thread> threads;
    for (int worker_idx = 0; worker_idx < workers; ++worker_idx) {
      threads.emplace_back([this, &runnable] { Work(runnable); });
    }
    for (std::thread& thread : threads) thread.join();
    return store_status_;
  }

 private:
  void Work(const std::vector<const PlannedJob*>& runnable) {
    while (true) {
      const size_t index = next_.fetch_add(1);
      if (index >= runnable.size() || stop_.load()) return;
      const PlannedJob& planned = *runnable[index];
      std::optional<store::JobRecord> job = RunWithRetries(planned);
      if (!job) return;  // the batch was interrupted
      Record(std::move(*job));
    }
  }

  // Attempts until one is not a transient failure or max_attempts are spent; the row says how
  // many it took. nullopt when the batch was interrupted meanwhile.
  std::optional<store::JobRecord> RunWithRetries(const PlannedJob& planned) {
    std::string earlier;  // what the failed attempts were
    for (int attempt = 1;; ++attempt) {
      if (attempt > 1) {
        const double wait = JobRetryBackoffSeconds(attempt);
        std::this_thread::sleep_for(std::chrono::duration<double>(wait));
        if (stop_.load()) return std::nullopt;
      }
      std::optional<store::JobRecord> job = RunOnce(planned);
      if (!job) return std::nullopt;
      const bool retry = attempt < options_.max_attempts && IsTransientJobFailure(*job);
      const std::string first_line = job->error_text.substr(0, job->error_text.find('\n'));
      if (retry) {
        earlier += "attempt " + std::to_string(attempt) + ": " + job->error_category + ": " +
                   first_line + "\n";
        continue;
      }
      if (attempt > 1) {
        job->error_text = "attempt " + std::to_string(attempt) + " of " +
                          std::to_string(options_.max_attempts) +
                          " (earlier attempts failed transiently)\n" + earlier + job->error_text;
        std::lock_guard<std::mutex> lock(mutex_);
        summary_.attempts[job->entry_id] = attempt;
        ++summary_.retried;
      }
      return job;
    }
  }

  std::optional<store::JobRecord> RunOnce(const PlannedJob& planned) {
    const fs::path dir = options_.out_dir / planned.entry->id;
    std::vector<std::string> argv = {options_.convgate};
    const std::vector<std::string> args = JobArgs(*planned.entry, planned.preflight);
    argv.insert(argv.end(), args.begin(), args.end());
    const bool sets_threads = std::find_if(args.begin(), args.end(), [](const std::string& arg) {
                                return arg == "--threads" || arg.rfind("--threads=", 0) == 0;
                              }) != args.end();
    if (options_.job_threads > 0 && !sets_threads) {
      argv.insert(argv.end(), {"--threads", std::to_string(options_.job_threads)});
    }
    if (planned.entry->command == "compare" || planned.entry->command == "verify") {
      argv.insert(argv.end(), options_.job_flags.begin(), options_.job_flags.end());
    }
    argv.insert(argv.end(), {"--out", dir.string()});
    SubprocessOptions sub;
    // The job's stderr is kept (its last lines are the error text): no progress lines in it.
    sub.extra_env.push_back("CONVGATE_PROGRESS=0");
    sub.timeout_seconds = planned.entry->timeout_seconds > 0 ? planned.entry->timeout_seconds
                                                             : options_.timeout_seconds;
    sub.address_space_bytes = options_.job_memory_bytes;
    sub.shown_argv0 = ShownBinary(options_.convgate);
    std::error_code ec;
    // OUT/<id> planted as a symlink (to another job's or anyone's folder) is not written through.
    if (fs::is_symlink(fs::symlink_status(dir, ec))) {
      store::JobRecord job = BaseRecord(planned, dir);
      job.verdict = Verdict::kError;
      job.error_category = "usage";
      job.error_text = dir.string() + " is a symlink: a job writes only into a folder of its own";
      return job;
    }
    fs::create_directories(dir, ec);
    // An earlier attempt's (or run's) reports must not pass for this attempt's.
    for (const char* name : {"report.json", "verify_result.json", "junit.xml"}) {
      fs::remove(dir / name, ec);
    }
    if (options_.on_start) {
      std::lock_guard<std::mutex> lock(mutex_);
      options_.on_start(planned.entry->id, total_);
    }
    const auto started = std::chrono::steady_clock::now();
    Result<SubprocessResult> result = RunSubprocess(argv, sub);
    store::JobRecord job = BaseRecord(planned, dir);
    if (!result.ok()) {
      if (result.status().code() == StatusCode::kUnavailable && stop_on_interrupt()) {
        return std::nullopt;
      }
      job.verdict = Verdict::kError;
      job.error_category = "spawn-failed";
      job.error_text = result.status().message();
      job.duration_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return job;
    }
    // Stopped because the batch itself was interrupted: not a result, so --resume reruns it.
    if (result->interrupted_by != 0) {
      stop_on_interrupt();
      return std::nullopt;
    }
    Classify(*result, job);
    ReadJobResults(dir, planned.entry->command, job);
    ClassifyOutOfMemory(options_.job_memory_bytes, job);
    return job;
  }

  bool stop_on_interrupt() {
    stop_.store(true);
    std::lock_guard<std::mutex> lock(mutex_);
    summary_.interrupted = true;
    return true;
  }

  void Record(store::JobRecord job) {
    job.finished_at = NowIso8601();
    std::lock_guard<std::mutex> lock(mutex_);
    Status recorded = store_.RecordJob(run_id_, job);
    if (!recorded.ok()) {
      // Without its store the batch would run jobs nobody can resume from: stop.
      if (store_status_.ok()) store_status_ = recorded;
      stop_.store(true);
      return;
    }
    if (job.verdict == Verdict::kPass) ++summary_.passed;
    if (job.verdict == Verdict::kFail) ++summary_.failed;
    if (job.verdict == Verdict::kError) {
      ++summary_.errors;
      ++summary_.errors_by_category[job.error_category];
    }
    ++done_;
    summary_.jobs.push_back(job);
    if (on_job_) on_job_(summary_.jobs.back(), done_, total_);
  }

  const BatchOptions& options_;
  store::Store& store_;
  int64_t run_id_;
  const JobCallback& on_job_;
  BatchSummary& summary_;
  std::mutex mutex_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  Status store_status_;
  int done_ = 0;
  int total_ = 0;
};

ExitCode ExitCodeOf(const BatchSummary& summary) {
  if (summary.failed > 0 || summary.skipped_verdicts.count(Verdict::kFail))
    return ExitCode::kFailed;
  if (summary.errors > 0 || summary.skipped_verdicts.count(Verdict::kError))
    return ExitCode::kCannotRun;
  return ExitCode::kPassed;
}

}  // namespace

std::string NowIso8601() { return UtcIso8601Now(); }

Result<BatchSummary> RunBatch(const Manifest& manifest, const BatchOptions& options,
                              store::Store& store, const JobCallback& on_job) {
  const auto started = std::chrono::steady_clock::now();
  BatchSummary summary;
  summary.manifest = manifest.path.string();
  summary.store = store::RedactStoreLocation(options.store_location);
  summary.manifest_entries = static_cast<int>(manifest.entries.size());
  const std::vector<ManifestEntry> entries =
      SelectShard(manifest.entries, options.shard_index, options.shard_count);
  summary.entries = static_cast<int>(entries.size());

  // Every entry's files first, before any job runs.
  std::vector<PlannedJob> planned;
  for (const ManifestEntry& entry : entries) {
    const double timeout =
        entry.timeout_seconds > 0 ? entry.timeout_seconds : options.timeout_seconds;
    PlannedJob job{&entry, CheckEntry(entry, timeout), ""};
    job.key = EntryKey(entry, job.preflight.files_sha256, VersionText());
    if (options.resume) {
      CONVGATE_ASSIGN_OR_RETURN(const std::optional<Verdict> verdict, store.FinalVerdict(job.key));
      // An error is not a verdict: the entry runs again unless errors are skipped too.
      if (verdict && (*verdict != Verdict::kError || options.skip_errors)) {
        ++summary.skipped_done;
        ++summary.skipped_verdicts[*verdict];
        continue;
      }
    }
    planned.push_back(std::move(job));
  }

  std::string argv_text;
  for (const std::string& arg : options.argv) {
    argv_text += (argv_text.empty() ? "" : " ") + store::RedactStoreArgument(arg);
  }
  const std::string shard = options.shard_count > 1 ? std::to_string(options.shard_index) + "/" +
                                                          std::to_string(options.shard_count)
                                                    : "";
  CONVGATE_ASSIGN_OR_RETURN(
      summary.run_id, store.BeginRun({manifest.path.string(), HostName(), VersionText(), shard,
                                      argv_text, NowIso8601()}));
  Runner runner(options, store, summary.run_id, on_job, summary);
  CONVGATE_RETURN_IF_ERROR(runner.Run(planned));
  if (options.cache_cleanup && !summary.interrupted) {
    summary.cache_cleanup = CleanCache(*options.cache_cleanup);
  }
  if (!summary.interrupted) CONVGATE_RETURN_IF_ERROR(store.EndRun(summary.run_id, NowIso8601()));
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  summary.exit_code = ExitCodeOf(summary);
  return summary;
}

int JobThreads(int jobs, int cores, int machine_cores) {
  if (jobs <= 1 && cores >= machine_cores) return 0;
  return std::max(1, cores / std::max(1, jobs));
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace convgate::batch
