// The SQLite store: one file, WAL (readers never block the writer, and a commit is one append),
// a busy timeout for concurrent batches, the schema version in PRAGMA user_version.
#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <array>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "store/history_columns.h"

namespace convgate::store {
namespace {

// Migration i takes a store from schema version i to i + 1. Append only: a released migration
// never changes, so every store reaches the same tables whatever version it started from.
constexpr std::array<std::string_view, kSchemaVersion> kMigrations = {
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  manifest TEXT NOT NULL,
  host TEXT NOT NULL,
  convgate_version TEXT NOT NULL,
  shard TEXT NOT NULL,
  argv TEXT NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  entry_id TEXT NOT NULL,
  entry_key TEXT NOT NULL,
  model_id TEXT NOT NULL,
  model_path TEXT NOT NULL,
  model_sha256 TEXT NOT NULL,
  model_type TEXT NOT NULL,
  model_type_source TEXT NOT NULL,
  command TEXT NOT NULL,
  conversion TEXT NOT NULL,
  conversion_path TEXT NOT NULL,
  verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'fail', 'error')),
  exit_code INTEGER NOT NULL,
  signal INTEGER NOT NULL,
  duration_seconds REAL NOT NULL,
  error_category TEXT NOT NULL,
  error_text TEXT NOT NULL,
  result_dir TEXT NOT NULL,
  finished_at TEXT NOT NULL
);
CREATE INDEX jobs_by_key ON jobs(entry_key);
CREATE INDEX jobs_by_entry ON jobs(entry_id, conversion, id);
CREATE TABLE outputs (
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  sample INTEGER NOT NULL,
  output TEXT NOT NULL,
  verdict TEXT NOT NULL,
  max_abs_error REAL,
  mean_abs_error REAL,
  mismatches INTEGER,
  cosine REAL,
  snr_db REAL,
  worst_index TEXT NOT NULL,
  worst_source REAL,
  worst_target REAL
);
CREATE INDEX outputs_by_job ON outputs(job_id);
)sql",
    // 2: where a job's hub models came from (JobRecord::model_origin, JSON).
    R"sql(
ALTER TABLE jobs ADD COLUMN model_origin TEXT NOT NULL DEFAULT '';
)sql",
    // 3: a conversion's identity (JobRecord::conversion_params, converter_version), its series'
    // index (history --regressions, Latest), and the non-finite counts of each output.
    R"sql(
ALTER TABLE jobs ADD COLUMN conversion_params TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN converter_version TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_by_series ON jobs(entry_id, model_id, conversion, conversion_params, id);
ALTER TABLE outputs ADD COLUMN non_finite INTEGER;
ALTER TABLE outputs ADD COLUMN introduced_non_finite INTEGER;
)sql",
    // 4: the benchmark's figures (JobRecord::p50_ms ... load_average; 0: not measured).
    R"sql(
ALTER TABLE jobs ADD COLUMN p50_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN p50_low_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN p50_high_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN p99_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN throughput REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN peak_rss_bytes REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN source_p50_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN speedup REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN speedup_low REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN speedup_high REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN load_average REAL NOT NULL DEFAULT 0;
)sql",
};

// A prepared statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql) {
    rc_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool prepared() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() const { return stmt_; }

  void Bind(int index, const std::string& text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void Bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void Bind(int index, int value) { sqlite3_bind_int64(stmt_, index, value); }
  void Bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  template <typename T>
  void Bind(int index, const std::optional<T>& value) {
    if (value) {
      Bind(index, *value);
    } else {
      sqlite3_bind_null(stmt_, index);
    }
  }

  std::string Text(int column) const {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    return text == nullptr ? std::string() : reinterpret_cast<const char*>(text);
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::optional<double> OptionalDouble(int column) const {
    if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, column);
  }
  // A count: SUM over integers, or (without figures) a NULL typed as a double.
  std::optional<int64_t> OptionalInt(int column) const {
    const std::optional<double> value = OptionalDouble(column);
    if (!value) return std::nullopt;
    return static_cast<int64_t>(*value);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

HistoryRow ReadHistoryRow(const Statement& stmt) {
  HistoryRow row;
  row.run_id = stmt.Int(0);
  row.job_id = stmt.Int(1);
  ReadJobColumns(
      row.job, [&](int column) { return stmt.Text(column); },
      [&](int column) { return stmt.Int(column); },
      [&](int column) { return stmt.OptionalDouble(column).value_or(0.0); });
  const int figures = FirstFigureColumn();
  row.max_abs_error = stmt.OptionalDouble(figures);
  row.mean_abs_error = stmt.OptionalDouble(figures + 1);
  row.mismatches = stmt.OptionalInt(figures + 2);
  row.cosine = stmt.OptionalDouble(figures + 3);
  row.snr_db = stmt.OptionalDouble(figures + 4);
  row.non_finite = stmt.OptionalInt(figures + 5);
  row.introduced_non_finite = stmt.OptionalInt(figures + 6);
  return row;
}

// The pattern (?1) and since (?2) conditions on the jobs of `alias`.
std::string HistoryConditions(const std::string& alias) {
  return "(?1 = '' OR " + alias + ".entry_id GLOB ?1 OR " + alias +
         ".model_id GLOB ?1) AND (?2 = '' OR " + alias + ".finished_at >= ?2)";
}

// "WHERE ..." for a history query; parameters ?1 (pattern), ?2 (since) and ?3
// (failing_latest_only) are always bound. The latest job of each entry comes from a GROUP BY over
// the jobs_by_entry index, not a MAX per row.
std::string HistoryFilter() {
  return " WHERE " + HistoryConditions("j") +
         " AND (?3 = 0 OR j.entry_id IN (SELECT l.entry_id FROM jobs l WHERE l.verdict <> 'pass'"
         " AND l.id IN (SELECT MAX(m.id) FROM jobs m WHERE " +
         HistoryConditions("m") + " GROUP BY " + SeriesColumns("m") + ")))";
}

}  // namespace

SqliteStore::SqliteStore(sqlite3* db, std::string location)
    : db_(db), location_(std::move(location)) {}

SqliteStore::~SqliteStore() { sqlite3_close_v2(db_); }

Status SqliteStore::Error(std::string_view what) const {
  const int code = sqlite3_extended_errcode(db_);
  std::string message =
      "store " + location_ + ": " + std::string(what) + ": " + sqlite3_errmsg(db_);
  if ((code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_CORRUPT) {
    return Status::DataLoss(std::move(message));
  }
  if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED) {
    return Status::Unavailable(message + " (locked by another process past the busy timeout)");
  }
  return Status::Unavailable(std::move(message));
}

Status SqliteStore::Exec(std::string_view sql, std::string_view what) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);
  if (rc != SQLITE_OK) return Error(what);
  return Status::OK();
}

Result<std::unique_ptr<Store>> SqliteStore::Open(const StoreOptions& options) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(options.location.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = "cannot open store " + options.location + ": " +
                          (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return Status::Unavailable(std::move(message));
  }
  auto store = std::unique_ptr<SqliteStore>(new SqliteStore(db, options.location));
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  // WAL: a commit appends to the log, readers (history) never block a batch. synchronous=NORMAL
  // in WAL mode loses no committed transaction when the process dies (SIGKILL), only on power
  // loss; FULL would add an fsync per job for that case.
  CONVGATE_RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL", "setting WAL"));
  CONVGATE_RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=NORMAL", "setting synchronous"));
  CONVGATE_RETURN_IF_ERROR(store->Exec("PRAGMA foreign_keys=ON", "enabling foreign keys"));
  CONVGATE_RETURN_IF_ERROR(store->Migrate());
  return std::unique_ptr<Store>(std::move(store));
}

Result<int> SqliteStore::SchemaVersion() {
  Statement stmt(db_, "PRAGMA user_version");
  if (!stmt.prepared() || sqlite3_step(stmt.get()) != SQLITE_ROW) {
    return Error("reading the schema version");
  }
  return static_cast<int>(stmt.Int(0));
}

Status SqliteStore::Migrate() {
  // IMMEDIATE: two batches opening a new store at once migrate one after the other, and the
  // second finds the work done.
  CONVGATE_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "starting the migration"));
  Result<int> version = SchemaVersion();
  if (!version.ok()) {
    (void)Exec("ROLLBACK", "rolling back");
    return version.status();
  }
  if (*version > kSchemaVersion) {
    (void)Exec("ROLLBACK", "rolling back");
    return Status::FailedPrecondition("store " + location_ + " has schema version " +
                                      std::to_string(*version) + ", newer than version " +
                                      std::to_string(kSchemaVersion) +
                                      " that this convgate knows: use a newer convgate");
  }
  for (int step = *version; step < kSchemaVersion; ++step) {
    Status applied =
        Exec(kMigrations[step], "migrating to schema version " + std::to_string(step + 1));
    if (!applied.ok()) {
      (void)Exec("ROLLBACK", "rolling back");
      return applied;
    }
  }
  if (*version < kSchemaVersion) {
    Status set = Exec("PRAGMA user_version = " + std::to_string(kSchemaVersion),
                      "recording the schema version");
    if (!set.ok()) {
      (void)Exec("ROLLBACK", "rolling back");
      return set;
    }
  }
  return Exec("COMMIT", "committing the migration");
}

Result<int64_t> SqliteStore::BeginRun(const RunRecord& run) {
  Statement stmt(db_,
                 "INSERT INTO runs (manifest, host, convgate_version, shard, argv, started_at) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!stmt.prepared()) return Error("preparing the run row");
  stmt.Bind(1, run.manifest);
  stmt.Bind(2, run.host);
  stmt.Bind(3, run.convgate_version);
  stmt.Bind(4, run.shard);
  stmt.Bind(5, run.argv);
  stmt.Bind(6, run.started_at);
  if (sqlite3_step(stmt.get()) != SQLITE_DONE) return Error("recording the run");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status SqliteStore::EndRun(int64_t run_id, const std::string& ended_at) {
  Statement stmt(db_, "UPDATE runs SET ended_at = ?1 WHERE id = ?2");
  if (!stmt.prepared()) return Error("preparing the run's end");
  stmt.Bind(1, ended_at);
  stmt.Bind(2, run_id);
  if (sqlite3_step(stmt.get()) != SQLITE_DONE) return Error("recording the run's end");
  return Status::OK();
}

Status SqliteStore::InsertJob(int64_t run_id, const JobRecord& job) {
  Statement stmt(db_, InsertJobSql('?'));
  if (!stmt.prepared()) return Error("preparing the job row");
  stmt.Bind(1, run_id);
  int index = 2;
  for (const JobField& field : JobFields()) {
    std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<decltype(member), Verdict JobRecord::*>) {
            stmt.Bind(index, std::string(VerdictName(job.*member)));
          } else {
            stmt.Bind(index, job.*member);
          }
        },
        field.member);
    ++index;
  }
  if (sqlite3_step(stmt.get()) != SQLITE_DONE) return Error("recording job " + job.entry_id);
  const int64_t job_id = sqlite3_last_insert_rowid(db_);
  Statement output_stmt(
      db_,
      "INSERT INTO outputs (job_id, sample, output, verdict, max_abs_error, mean_abs_error, "
      "mismatches, cosine, snr_db, worst_index, worst_source, worst_target, non_finite, "
      "introduced_non_finite) VALUES "
      "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  if (!output_stmt.prepared()) return Error("preparing the output rows");
  for (const OutputRecord& output : job.outputs) {
    sqlite3_reset(output_stmt.get());
    output_stmt.Bind(1, job_id);
    output_stmt.Bind(2, output.sample);
    output_stmt.Bind(3, output.output);
    output_stmt.Bind(4, std::string(VerdictName(output.verdict)));
    output_stmt.Bind(5, output.max_abs_error);
    output_stmt.Bind(6, output.mean_abs_error);
    output_stmt.Bind(7, output.mismatches);
    output_stmt.Bind(8, output.cosine);
    output_stmt.Bind(9, output.snr_db);
    output_stmt.Bind(10, output.worst_index);
    output_stmt.Bind(11, output.worst_source);
    output_stmt.Bind(12, output.worst_target);
    output_stmt.Bind(13, output.non_finite);
    output_stmt.Bind(14, output.introduced_non_finite);
    if (sqlite3_step(output_stmt.get()) != SQLITE_DONE) {
      return Error("recording output " + output.output + " of job " + job.entry_id);
    }
  }
  return Status::OK();
}

Status SqliteStore::RecordJob(int64_t run_id, const JobRecord& job) {
  CONVGATE_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "starting job " + job.entry_id));
  Status inserted = InsertJob(run_id, job);
  if (!inserted.ok()) {
    (void)Exec("ROLLBACK", "rolling back");
    return inserted;
  }
  return Exec("COMMIT", "committing job " + job.entry_id);
}

Result<std::optional<Verdict>> SqliteStore::FinalVerdict(const std::string& entry_key) {
  Statement stmt(db_, "SELECT verdict FROM jobs WHERE entry_key = ?1 ORDER BY id DESC LIMIT 1");
  if (!stmt.prepared()) return Error("preparing the resume query");
  stmt.Bind(1, entry_key);
  const int rc = sqlite3_step(stmt.get());
  if (rc == SQLITE_DONE) return std::optional<Verdict>();
  if (rc != SQLITE_ROW) return Error("querying job " + entry_key);
  // The table's CHECK admits only the three names.
  return std::optional<Verdict>(ParseVerdict(stmt.Text(0)).value_or(Verdict::kError));
}

Result<int64_t> SqliteStore::CountJobs(const std::string& entry_key) {
  Statement stmt(db_, "SELECT COUNT(*) FROM jobs WHERE entry_key = ?1");
  if (!stmt.prepared()) return Error("preparing the resume query");
  stmt.Bind(1, entry_key);
  if (sqlite3_step(stmt.get()) != SQLITE_ROW) return Error("querying job " + entry_key);
  return stmt.Int(0);
}

Result<std::vector<HistoryRow>> SqliteStore::Query(const std::string& sql,
                                                   const HistoryQuery& query) {
  Statement stmt(db_, sql);
  if (!stmt.prepared()) return Error("preparing the history query");
  stmt.Bind(1, query.pattern);
  stmt.Bind(2, query.since);
  stmt.Bind(3, query.failing_latest_only ? 1 : 0);
  std::vector<HistoryRow> rows;
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) rows.push_back(ReadHistoryRow(stmt));
  if (rc != SQLITE_DONE) return Error("reading the history");
  return rows;
}

Result<std::vector<HistoryRow>> SqliteStore::Latest(const HistoryQuery& query) {
  // The latest job of each series (entry, model, conversion, parameters) over all jobs, then
  // filtered. IN over a GROUP BY reads the jobs_by_series index once; a correlated MAX per row
  // probed it once per job.
  return Query(SelectHistoryColumns(query.with_figures) + " FROM jobs j" + HistoryFilter() +
                   " AND j.id IN (SELECT MAX(k.id) FROM jobs k GROUP BY " + SeriesColumns("k") +
                   ") ORDER BY j.entry_id, j.conversion, j.conversion_params, j.model_id",
               query);
}

Result<std::vector<HistoryRow>> SqliteStore::Jobs(const HistoryQuery& query) {
  return Query(SelectHistoryColumns(query.with_figures) + " FROM jobs j" + HistoryFilter() +
                   " ORDER BY j.id",
               query);
}

}  // namespace convgate::store
