// `convgate batch MANIFEST`: every entry of a manifest verified as its own convgate process, in
// parallel, with a timeout each, results in a store (SQLite) as each job ends; resumable and
// shardable (batch/batch.h).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "cli/batch_progress.h"
#include "cli/batch_slurm.h"
#include "cli/command.h"
#include "convgate/batch/batch.h"
#include "convgate/batch/out_lock.h"
#include "convgate/core/file_util.h"
#include "convgate/core/interrupt.h"
#include "convgate/core/limits.h"
#include "convgate/core/numbers.h"
#include "convgate/core/units.h"
#include "convgate/report/json_text.h"

namespace convgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kBatchExitCodes[] =
    "Exit codes: 0 every entry passed; 1 a gate failed; 3 a job could not load, convert or run "
    "(a missing or corrupt file, a crash, a timeout) and none failed; 2 usage error (a bad flag "
    "or manifest, found before any job runs); 3 also when the store cannot be opened, is locked "
    "past its busy timeout or has a newer schema; 4 internal error; 130/143 interrupted (the "
    "unfinished entries run again with --resume). With --resume, entries skipped as done count "
    "with the verdict recorded for them.";

// "I/N" with 0 <= I < N.
Status ParseShard(const std::string& text, int& index, int& count) {
  const size_t slash = text.find('/');
  const std::string bad = "--shard takes I/N with 0 <= I < N (e.g. 0/4), not '" + text + "'";
  if (slash == std::string::npos) return Status::InvalidArgument(bad);
  try {
    size_t used = 0;
    index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) return Status::InvalidArgument(bad);
    const std::string rest = text.substr(slash + 1);
    count = std::stoi(rest, &used);
    if (used != rest.size()) return Status::InvalidArgument(bad);
  } catch (const std::exception&) {
    return Status::InvalidArgument(bad);
  }
  if (count < 1 || index < 0 || index >= count) return Status::InvalidArgument(bad);
  return Status::OK();
}

class BatchCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "batch",
        "Verify every model of a manifest (JSON list, text list or YAML), each as its own "
        "process with a timeout, in parallel; results go to a store as each job ends");
    app->add_option("MANIFEST", manifest_, "The manifest (.json, .yaml, or one path per line)")
        ->required();
    app->footer(kBatchExitCodes);
    options_.jobs = std::max(1u, std::thread::hardware_concurrency());
    Flag jobs = IntegerFlag("-j,--jobs", "N", "Jobs at once", {"2"}, 1, 256, options_.jobs);
    jobs.default_text = "the number of usable cores";
    Flag store = TextFlag("--store", "PATH|URL",
                          "The results store: an SQLite file, or a PostgreSQL database shared by "
                          "many machines (postgresql://USER@HOST/DB; the password from PGPASSWORD "
                          "or ~/.pgpass)",
                          {"results/convgate.db", "postgresql://ci@db.example/convgate"}, store_);
    store.default_text = "OUT/convgate.db";
    flags_.Add({
        std::move(jobs),
        std::move(store),
        TextFlag("--out", "DIR", "Per-job result folders (OUT/<entry id>) and summary.json",
                 {"batch-out"}, out_dir_),
        SwitchFlag("--resume",
                   "Skip entries the store already holds a verdict for (same entry, same model "
                   "bytes, same convgate version): their latest job passed or failed. An entry "
                   "whose latest job is an error (could not load, convert or run, crashed, "
                   "timed out) runs again",
                   options_.resume),
        SwitchFlag("--skip-errors",
                   "With --resume, skip entries whose latest job is an error too (they count "
                   "as errors, as recorded)",
                   options_.skip_errors),
        Flag{.name = "--shard",
             .value_name = "I/N",
             .help = "Take only share I of N (by a hash of the entry id; 0 <= I < N)",
             .examples = {"0/4", "3/4"},
             .apply =
                 [this](const std::string& value) {
                   return ParseShard(value, options_.shard_index, options_.shard_count);
                 }},
        DurationFlag("--timeout", "Per job, unless the entry sets its own timeout", {"90s", "10m"},
                     options_.timeout_seconds),
        Flag{.name = "--job-memory",
             .value_name = "SIZE",
             .help = "Each job's address-space limit (RLIMIT_AS, covering the converters and "
                     "runners it starts); a job that runs out is an error of category oom. "
                     "Address space counts reserved memory: allow ONNX Runtime several times "
                     "the model's size",
             .default_text = "none",
             .examples = {"4G", "512MiB"},
             .apply = [this](const std::string& value) -> Status {
               CONVGATE_ASSIGN_OR_RETURN(options_.job_memory_bytes, ParseByteSize(value));
               if (options_.job_memory_bytes < (int64_t{16} << 20)) {
                 return Status::InvalidArgument("--job-memory " + value +
                                                " is below 16 MiB: no convgate job starts in that");
               }
               return Status::OK();
             }},
        Flag{.name = "--retries",
             .value_name = "N",
             .help = "Retries of a job whose failure looks transient (killed by SIGKILL from "
                     "outside, EX_TEMPFAIL, a connection or 'try again' error); never of a gate "
                     "failure, a bad file, a crash, an oom or a timeout",
             .default_text = std::to_string(options_.max_attempts - 1),
             .examples = {"0", "3"},
             .apply = [this](const std::string& value) -> Status {
               CONVGATE_ASSIGN_OR_RETURN(const int64_t retries, ParseInteger(value, 0, 10));
               options_.max_attempts = static_cast<int>(retries) + 1;
               return Status::OK();
             }},
        SwitchFlag("--no-cache-cleanup",
                   "Do not prune the conversion cache after the batch (by default it is pruned "
                   "to CACHE_CLEANUP_THRESHOLD GB, keeping entries younger than "
                   "CACHE_CLEANUP_MIN_AGE_DAYS, as `convgate cache prune`)",
                   no_cache_cleanup_),
        SwitchFlag("--quiet", "No progress on stderr", quiet_),
        SwitchFlag("--json", "Print summary.json's content instead of the table", json_),
    });
    flags_.AddCheck([this](const FlagSet&) -> Status {
      if (options_.skip_errors && !options_.resume) {
        return Status::InvalidArgument(
            "--skip-errors says which entries --resume skips: give --resume too");
      }
      return Status::OK();
    });
    AddSlurmFlags(flags_, slurm_);
    AddBenchmarkFlags(flags_, benchmark_, BenchmarkUse::kOptional);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    Result<batch::Manifest> manifest = batch::ReadManifest(manifest_);
    if (!manifest.ok()) {
      const bool missing = manifest.status().code() == StatusCode::kNotFound;
      return ReportError(missing ? gate::Stage::kLoad : gate::Stage::kFlags, manifest.status());
    }
    options_.out_dir = out_dir_;
    std::error_code ec;
    fs::create_directories(options_.out_dir, ec);
    if (ec) {
      return ReportError(gate::Stage::kWrite,
                         Status::Unavailable("cannot create " + out_dir_ + ": " + ec.message()));
    }
    options_.store_location = store_.empty() ? (options_.out_dir / "convgate.db").string() : store_;
    options_.argv = invocation.argv;
    options_.job_threads =
        batch::JobThreads(options_.jobs, UsableCores(),
                          static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    if (!no_cache_cleanup_) {
      // A malformed threshold is a usage error now, not a surprise after the jobs.
      Result<convert::PruneOptions> cleanup = batch::CacheCleanupOptions();
      if (!cleanup.ok()) return ReportError(gate::Stage::kFlags, cleanup.status());
      options_.cache_cleanup = *cleanup;
    }
    PassBenchmarkFlags();
    if (slurm_.slurm) return RunSlurmBatch(*manifest, slurm_, options_, quiet_, json_);
    Result<batch::OutLock> claim =
        batch::OutLock::Acquire(options_.out_dir, options_.shard_index, options_.shard_count);
    if (!claim.ok()) return ReportError(gate::Stage::kLoad, claim.status());
    Result<std::unique_ptr<store::Store>> store = store::Store::Open({options_.store_location});
    if (!store.ok()) return ReportError(gate::Stage::kLoad, store.status());
    BatchProgress progress(BatchProgress::ModeFor(quiet_));
    options_.on_start = [&progress](const std::string& id, int total) {
      progress.Started(id, total);
    };
    Result<batch::BatchSummary> summary =
        batch::RunBatch(*manifest, options_, **store,
                        [&progress](const store::JobRecord& job, int done, int total) {
                          progress.Finished(job, done, total);
                        });
    progress.Stop();
    if (!summary.ok()) return ReportError(gate::Stage::kWrite, summary.status());
    const nlohmann::json json = batch::SummaryJson(*summary);
    Status written =
        WriteFileAtomic(options_.out_dir / "summary.json", report::DumpJson(json, 2) + "\n");
    std::cout << (json_ ? report::DumpJson(json, 2) + "\n"
                        : ForTerminal(batch::SummaryText(*summary)));
    if (!written.ok()) return ReportError(gate::Stage::kWrite, written);
    if (summary->interrupted && Interrupted())
      return static_cast<ExitCode>(128 + InterruptSignal());
    return summary->exit_code;
  }

 private:
  // --benchmark and its flags, handed to every compare and verify job as given.
  void PassBenchmarkFlags() {
    if (!benchmark_.enabled) return;
    options_.job_flags = {"--benchmark"};
    for (const char* name :
         {"--warmup", "--iterations", "--bench-time", "--streams", "--min-speedup",
          "--max-slowdown", "--cpus", "--source-cpus", "--target-cpus"}) {
      for (const std::string& value : flags_.Values(name)) {
        options_.job_flags.insert(options_.job_flags.end(), {name, value});
      }
    }
    if (options_.jobs > 1 && !quiet_) {
      std::cerr << "convgate: note: --benchmark with " << options_.jobs
                << " jobs at once: their timings compete for the CPUs (each job records the load "
                   "average); -j 1 gives figures to trust\n";
    }
  }

  gate::BenchmarkOptions benchmark_;
  std::string manifest_;
  std::string store_;
  std::string out_dir_ = "convgate-batch";
  bool quiet_ = false;
  bool no_cache_cleanup_ = false;
  bool json_ = false;
  batch::BatchOptions options_;
  SlurmCliOptions slurm_;
};

}  // namespace

std::unique_ptr<Command> MakeBatchCommand() { return std::make_unique<BatchCommand>(); }

}  // namespace convgate::cli
