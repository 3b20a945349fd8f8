// The results store: what `convgate batch` ran, on which models, with which verdicts and figures,
// so `convgate history` can answer without the report files. One interface, one implementation per
// database (src/store/sqlite_store.cc, src/store/postgres_store.cc), chosen by Store::Open from
// the location's spelling (store/location.h).
//
// Durability: every RecordJob is one transaction holding the job row and all its output rows, so a
// convgate killed at any moment (SIGKILL included) leaves either the whole job or none of it.
//
// Thread safety: a Store is not thread-safe; callers serialise their calls (batch writes from its
// collecting thread under a mutex). Several processes may write to one SQLite file at once: WAL
// and a busy timeout make them wait for each other instead of failing. Any number of processes on
// any number of machines may write to one PostgreSQL database at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/verdict.h"

namespace convgate::store {

// The schema version this binary writes and reads. A store whose schema is newer is refused
// (FailedPrecondition naming both versions) rather than written with an older idea of its tables.
inline constexpr int kSchemaVersion = 4;

struct StoreOptions {
  // A file path (SQLite, created with its folder's permissions when missing) or ":memory:"; or a
  // PostgreSQL database: postgresql://[user[:password]@][host][:port]/dbname[?param=value...]
  // (postgres:// too) or a libpq keyword string ("host=db dbname=convgate"). The database must
  // exist; its tables are created on first open. Messages show it through RedactStoreLocation.
  std::string location;
  // How long a writer waits for another process's lock before giving up: 30 s covers a store
  // shared by a few batches on one machine, whose transactions take milliseconds. PostgreSQL
  // takes it as lock_timeout, and (in whole seconds, at least 2) as the connect timeout.
  int busy_timeout_ms = 30000;
  // How long one call may wait for a PostgreSQL server that answers nothing (stopped, swapped
  // out, cut off by a partition): the call is then cut off and fails naming the store, so a
  // frozen server ends a batch with exit 3 instead of hanging it. Two minutes leaves a history
  // query over 100k jobs (about 1 s) and a lock wait (busy_timeout_ms) far inside. Store::Open
  // takes kStoreDeadlineEnv (seconds) over this default.
  int call_deadline_ms = 120000;
};

inline constexpr char kStoreDeadlineEnv[] = "CONVGATE_STORE_DEADLINE_SECONDS";

struct RunRecord {
  std::string manifest;  // the manifest path as given
  std::string host;
  std::string convgate_version;  // "0.1.0 (4a1a664fcf30)"
  std::string shard;             // "" or "I/N"
  std::string argv;              // the batch's command line, space-joined
  std::string started_at;        // ISO 8601 UTC, "2026-11-26T17:02:03Z"
};

// One per-output figure row, read from the job's report.json.
struct OutputRecord {
  int64_t sample = 0;
  std::string output;
  Verdict verdict = Verdict::kError;
  std::optional<double> max_abs_error;
  std::optional<double> mean_abs_error;
  std::optional<int64_t> mismatches;
  std::optional<double> cosine;
  std::optional<double> snr_db;
  std::string worst_index;  // "[0, 6]", "" when unknown
  std::optional<double> worst_source;
  std::optional<double> worst_target;
  // Schema version 3. The target's NaN and +-Inf elements (a run's: the model's), and of those the
  // ones where the source is finite (the target introduced them; unset for a run). Unset when
  // unknown (a job recorded before version 3, an output that was not compared). When the target
  // introduced any, or no element pair was finite, the error figures above and cosine and SNR are
  // unset: NaN is never agreement (ReadJobJson).
  std::optional<int64_t> non_finite;
  std::optional<int64_t> introduced_non_finite;
};

struct JobRecord {
  std::string entry_id;
  std::string entry_key;  // the resume key (batch/manifest.h EntryKey)
  std::string model_id;
  std::string model_path;
  std::string model_sha256;
  std::string model_type;         // "" when undecided
  std::string model_type_source;  // "manifest", "config.json", "graph", "name", "none"
  std::string command;            // "verify", "compare", "run"
  std::string conversion;         // "to:fp16", "target:<path>", "" for run
  std::string conversion_path;    // verify_result.json's conversion_path, "" when none
  // Schema version 3: with `conversion`, the conversion's identity (ConversionIdentity). The
  // conversion's parameters in canonical form (CanonicalParams: "keep_io_types=1,op_block_list=
  // Resize"), "" when none; and the converter that ran, its tool and version from report.json's
  // conversion record ("convgate fp16 0.1.0 (fp16 revision 3)"), "" when unknown (no conversion,
  // or the job stopped before converting).
  std::string conversion_params;
  std::string converter_version;
  Verdict verdict = Verdict::kError;  // stored as VerdictName: "pass", "fail", "error"
  int exit_code = -1;  // the child's, -1 when it did not exit (signal, timeout, skipped)
  int signal = 0;
  double duration_seconds = 0.0;
  std::string error_category;  // "" for pass/fail; "missing-file", "timeout", "crash", ...
  std::string error_text;
  std::string result_dir;
  std::string finished_at;  // ISO 8601 UTC
  // Where the job's hub models came from (hub::ModelOrigin of each hf:// model, as the JSON array
  // report/json/origin_json.h writes); "" when it used none. Schema version 2.
  std::string model_origin;
  // Schema version 4: the benchmark's figures (`bench`, --benchmark), 0 when not measured. The
  // measured model's (the target's, or the one model's) median latency with its 95% interval,
  // p99, throughput (inferences/s) and peak resident memory; the source's median and the speedup
  // (source / target medians) with its interval; the 1-minute load average when measuring.
  double p50_ms = 0.0;
  double p50_low_ms = 0.0;
  double p50_high_ms = 0.0;
  double p99_ms = 0.0;
  double throughput = 0.0;
  double peak_rss_bytes = 0.0;
  double source_p50_ms = 0.0;
  double speedup = 0.0;
  double speedup_low = 0.0;
  double speedup_high = 0.0;
  double load_average = 0.0;
  std::vector<OutputRecord> outputs;
};

// One row of a history query: a job and the run it belongs to.
struct HistoryRow {
  int64_t run_id = 0;
  int64_t job_id = 0;
  JobRecord job;
  std::optional<double> max_abs_error;  // the largest over the job's outputs
  // The job's other figures over its outputs, each the worst: the largest mean abs error, the
  // total of mismatches, the smallest cosine and SNR (history --trend).
  std::optional<double> mean_abs_error;
  std::optional<int64_t> mismatches;
  std::optional<double> cosine;
  std::optional<double> snr_db;
  // The totals over the job's outputs of OutputRecord's non-finite counts (schema version 3).
  // cosine and snr_db are unset when any output has introduced non-finite elements.
  std::optional<int64_t> non_finite;
  std::optional<int64_t> introduced_non_finite;
};

// "a=1,b=x,y": the parameters sorted by name (a std::map's order), name=value joined by ','.
std::string CanonicalParams(const std::map<std::string, std::string>& params);

// How history names a job's conversion: its `conversion` with its parameters in braces,
// "to:fp16{keep_io_types=1,op_block_list=Resize}"; the conversion alone when it has none.
std::string ConversionLabel(const JobRecord& job);

// The key of a job's series (history --regressions and --trend): entry id, model id, conversion
// and parameters; a given target counts as "target:" whatever its file name (an entry whose
// nightly target is written under a new name is still the same conversion).
std::vector<std::string> SeriesKey(const JobRecord& job);

// Whether two jobs ran the same conversion, so their figures compare: the same SeriesKey, and the
// same converter version where both know it (a job that stopped before converting does not).
bool SameConversion(const JobRecord& a, const JobRecord& b);

struct HistoryQuery {
  std::string pattern;  // "" (every entry) or a glob over entry id and model id ("tiny*")
  std::string since;    // "" or an ISO 8601 prefix; jobs finished at or after it
  // Only the jobs of entries one of whose series (entry id, model id, conversion and its
  // parameters) has a latest matching job that is not a pass: everything `history --regressions`
  // needs, without reading the history of every entry that passes.
  bool failing_latest_only = false;
  // false: the rows' figures (HistoryRow max_abs_error ... snr_db) may be left empty, for queries
  // that read only verdicts over many jobs (history --regressions over 100,000 rows). A store may
  // fill them anyway.
  bool with_figures = true;
};

class Store {
 public:
  virtual ~Store() = default;

  // Opens (creating when missing) the store at options.location and applies pending migrations.
  // Unavailable naming the location (without its password) when it cannot be opened or reached,
  // or stays locked past the busy timeout; Unimplemented for a URL scheme that is no database
  // convgate knows; FailedPrecondition naming both versions when its schema is newer than
  // kSchemaVersion; DataLoss when the file is not a database.
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);

  // The schema version of the open store (kSchemaVersion after Open).
  virtual Result<int> SchemaVersion() = 0;

  // Starts a run; returns its id.
  virtual Result<int64_t> BeginRun(const RunRecord& run) = 0;
  virtual Status EndRun(int64_t run_id, const std::string& ended_at) = 0;

  // The job and its outputs, in one transaction.
  virtual Status RecordJob(int64_t run_id, const JobRecord& job) = 0;

  // The verdict of the latest job recorded with this resume key, nullopt when there is none.
  virtual Result<std::optional<Verdict>> FinalVerdict(const std::string& entry_key) = 0;

  // How many job rows carry `entry_key` (tests: "exactly once").
  virtual Result<int64_t> CountJobs(const std::string& entry_key) = 0;

  // The latest job of each series (entry id, model id, conversion, conversion parameters)
  // matching the query, ordered by entry id, conversion and parameters. A newer converter
  // version supersedes an older one.
  virtual Result<std::vector<HistoryRow>> Latest(const HistoryQuery& query) = 0;

  // Every job matching the query, oldest first (for trends and regressions).
  virtual Result<std::vector<HistoryRow>> Jobs(const HistoryQuery& query) = 0;
};

}  // namespace convgate::store
