// The results store's figures (issue 13): milliseconds per RecordJob (one job row and its output
// rows, one transaction) and the time of the history queries over many job rows, for SQLite and
// PostgreSQL, each next to a baseline measured in the same run through the database's own client
// library:
//   write:   one bare INSERT of the same job columns per transaction (autocommit) into a table
//            without indexes or keys (sqlite3_step / PQexecPrepared);
//   history: reading every job row's columns with a bare SELECT (no latest-per-entry, no figure
//            from outputs).
//
//   convgate-store-bench [--sqlite PATH] [--postgres URL] [--jobs N] [--rows N] [--entries N]
//
// Each store named must be empty or missing (PATH is replaced). The history stores are left
// filled for bench/store.sh, which times `convgate history` on them: ROWS job rows over ENTRIES
// entries (ROWS / ENTRIES runs), one output each, 10 entries failing in the last run.
#include <libpq-fe.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "convgate/store/store.h"

namespace {

using convgate::store::HistoryRow;
using convgate::store::JobRecord;
using convgate::store::OutputRecord;
using convgate::store::Store;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string sqlite;
  std::string postgres;
  int jobs = 1000;
  int rows = 100000;
  int entries = 1000;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "convgate-store-bench: %s\n", message.c_str());
  std::exit(3);
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

JobRecord BenchJob(int index) {
  JobRecord job;
  job.entry_id = "bench-" + std::to_string(index);
  job.entry_key = "key-" + std::to_string(index);
  job.model_id = job.entry_id;
  job.model_path = "/models/" + job.entry_id + ".onnx";
  job.model_sha256 = std::string(64, 'a');
  job.model_type = "image-classification";
  job.model_type_source = "graph";
  job.command = "verify";
  job.conversion = "to:fp16";
  job.verdict = Verdict::kPass;
  job.exit_code = 0;
  job.duration_seconds = 1.25;
  job.result_dir = "/out/" + job.entry_id;
  job.finished_at = "2026-11-26T17:00:00Z";
  for (const char* name : {"logits", "hidden"}) {
    OutputRecord output;
    output.output = name;
    output.verdict = Verdict::kPass;
    output.max_abs_error = 1e-6;
    output.mean_abs_error = 1e-7;
    output.mismatches = 0;
    output.cosine = 0.999999;
    output.snr_db = 80.0;
    output.worst_index = "[0, 6]";
    output.worst_source = 1.5;
    output.worst_target = 1.500001;
    job.outputs.push_back(output);
  }
  return job;
}

std::unique_ptr<Store> OpenStore(const std::string& location) {
  auto store = Store::Open({location});
  if (!store.ok()) Die(store.status().ToString());
  return std::move(*store);
}

// ms per RecordJob over `jobs` jobs of two outputs each.
double StoreWriteMs(Store& store, int jobs) {
  auto run = store.BeginRun({"bench.yaml", "bench", "bench", "", "", "2026-11-26T17:00:00Z"});
  if (!run.ok()) Die(run.status().ToString());
  const auto start = Clock::now();
  for (int job_idx = 0; job_idx < jobs; ++job_idx) {
    auto status = store.RecordJob(*run, BenchJob(job_idx));
    if (!status.ok()) Die(status.ToString());
  }
  return SecondsSince(start) * 1000.0 / jobs;
}

// The bare rows of the write baseline: the job columns, as text.
std::vector<std::string> BareRow(int index) {
  const JobRecord job = BenchJob(index);
  return {"1",
          job.entry_id,
          job.entry_key,
          job.model_id,
          job.model_path,
          job.model_sha256,
          job.model_type,
          job.model_type_source,
          job.command,
          job.conversion,
          job.conversion_path,
          job.verdict,
          "0",
          "0",
          "1.25",
          job.error_category,
          job.error_text,
          job.result_dir,
          job.finished_at};
}

constexpr char kBareColumns[] =
    "run_id, entry_id, entry_key, model_id, model_path, model_sha256, model_type, "
    "model_type_source, command, conversion, conversion_path, verdict, exit_code, signal, "
    "duration_seconds, error_category, error_text, result_dir, finished_at";

// ---- SQLite ----------------------------------------------------------------------------------

void SqliteExec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error != nullptr ? error : "?";
    sqlite3_free(error);
    Die("sqlite: " + message + " in: " + sql.substr(0, 120));
  }
}

sqlite3* SqliteOpen(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Die("cannot open " + path);
  // As SqliteStore opens it: WAL, synchronous=NORMAL.
  SqliteExec(db, "PRAGMA journal_mode=WAL");
  SqliteExec(db, "PRAGMA synchronous=NORMAL");
  return db;
}

double SqliteBareWriteMs(const std::string& path, int jobs) {
  sqlite3* db = SqliteOpen(path);
  SqliteExec(db, "DROP TABLE IF EXISTS bare_jobs");
  SqliteExec(db, "CREATE TABLE bare_jobs AS SELECT * FROM jobs WHERE 0");
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = std::string("INSERT INTO bare_jobs (") + kBareColumns +
                          ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  const auto start = Clock::now();
  for (int job_idx = 0; job_idx < jobs; ++job_idx) {
    const std::vector<std::string> row = BareRow(job_idx);
    sqlite3_reset(stmt);
    for (size_t col = 0; col < row.size(); ++col) {
      sqlite3_bind_text(stmt, static_cast<int>(col + 1), row[col].c_str(), -1, SQLITE_TRANSIENT);
    }
    if (sqlite3_step(stmt) != SQLITE_DONE) Die(std::string("sqlite: ") + sqlite3_errmsg(db));
  }
  const double ms = SecondsSince(start) * 1000.0 / jobs;
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return ms;
}

// ROWS job rows: entry (i mod ENTRIES) in run (i / ENTRIES + 1); outputs one per job.
void SqliteFill(const std::string& path, const Options& options) {
  sqlite3* db = SqliteOpen(path);
  const int runs = options.rows / options.entries;
  const std::string fill =
      "BEGIN;"
      "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < " +
      std::to_string(runs) +
      ") INSERT INTO runs (manifest, host, convgate_version, shard, argv, started_at) "
      "SELECT 'bench.yaml', 'bench', 'bench', '', '', '2026-11-26T17:00:00Z' FROM r;"
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < " +
      std::to_string(options.rows - 1) + ") INSERT INTO jobs (" + kBareColumns + ") SELECT i / " +
      std::to_string(options.entries) + " + 1, 'm' || (i % " + std::to_string(options.entries) +
      "), 'k' || i, 'm' || (i % " + std::to_string(options.entries) +
      "), '/models/m.onnx', 'sha', 'bert', 'config.json', 'verify', 'to:fp16', '', "
      "CASE WHEN i / " +
      std::to_string(options.entries) + " = " + std::to_string(runs - 1) + " AND i % " +
      std::to_string(options.entries) +
      " < 10 THEN 'fail' ELSE 'pass' END, 0, 0, 1.5, '', '', '/out', "
      "'2026-11-26T17:00:00Z' FROM n;"
      "INSERT INTO outputs (job_id, sample, output, verdict, max_abs_error, mean_abs_error, "
      "mismatches, cosine, snr_db, worst_index, worst_source, worst_target) "
      "SELECT id, 0, 'logits', verdict, 1e-6 * (id % 7), 1e-7, 0, 0.9999, 80.0, '[0]', 1.0, 1.0 "
      "FROM jobs;"
      "COMMIT;";
  SqliteExec(db, fill);
  sqlite3_close(db);
}

double SqliteBareReadSeconds(const std::string& path) {
  sqlite3* db = SqliteOpen(path);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, (std::string("SELECT id, ") + kBareColumns + " FROM jobs").c_str(), -1,
                     &stmt, nullptr);
  const auto start = Clock::now();
  size_t bytes = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    for (int col = 0; col < sqlite3_column_count(stmt); ++col) {
      const unsigned char* text = sqlite3_column_text(stmt, col);
      bytes += text != nullptr ? std::string(reinterpret_cast<const char*>(text)).size() : 0;
    }
  }
  const double seconds = SecondsSince(start);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  if (bytes == 0) Die("sqlite: no rows read");
  return seconds;
}

// ---- PostgreSQL ------------------------------------------------------------------------------

PGconn* PgConnect(const std::string& url) {
  PGconn* conn = PQconnectdb(url.c_str());
  if (PQstatus(conn) != CONNECTION_OK) Die(std::string("postgres: ") + PQerrorMessage(conn));
  return conn;
}

void PgExec(PGconn* conn, const std::string& sql) {
  PGresult* result = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    const std::string message = PQerrorMessage(conn);
    PQclear(result);
    Die("postgres: " + message + " in: " + sql.substr(0, 120));
  }
  PQclear(result);
}

double PgBareWriteMs(const std::string& url, int jobs) {
  PGconn* conn = PgConnect(url);
  PgExec(conn, "DROP TABLE IF EXISTS bare_jobs");
  PgExec(conn, "CREATE TABLE bare_jobs AS SELECT * FROM jobs WHERE false");
  const std::string sql = std::string("INSERT INTO bare_jobs (") + kBareColumns +
                          ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, "
                          "$15, $16, $17, $18, $19)";
  PQclear(PQprepare(conn, "bare", sql.c_str(), 19, nullptr));
  const auto start = Clock::now();
  for (int job_idx = 0; job_idx < jobs; ++job_idx) {
    const std::vector<std::string> row = BareRow(job_idx);
    std::vector<const char*> values;
    for (const std::string& value : row) values.push_back(value.c_str());
    PGresult* result = PQexecPrepared(conn, "bare", 19, values.data(), nullptr, nullptr, 0);
    if (PQresultStatus(result) != PGRES_COMMAND_OK) Die(PQerrorMessage(conn));
    PQclear(result);
  }
  const double ms = SecondsSince(start) * 1000.0 / jobs;
  PQfinish(conn);
  return ms;
}

void PgFill(const std::string& url, const Options& options) {
  PGconn* conn = PgConnect(url);
  const int runs = options.rows / options.entries;
  const std::string entries = std::to_string(options.entries);
  PgExec(conn,
         "BEGIN;"
         "INSERT INTO runs (manifest, host, convgate_version, shard, argv, started_at) "
         "SELECT 'bench.yaml', 'bench', 'bench', '', '', '2026-11-26T17:00:00Z' "
         "FROM generate_series(1, " +
             std::to_string(runs) + ");" + "INSERT INTO jobs (" + kBareColumns +
             ") SELECT (SELECT MIN(id) FROM runs) + i / " + entries + ", 'm' || (i % " + entries +
             "), 'k' || i, 'm' || (i % " + entries +
             "), '/models/m.onnx', 'sha', 'bert', 'config.json', 'verify', 'to:fp16', '', "
             "CASE WHEN i / " +
             entries + " = " + std::to_string(runs - 1) + " AND i % " + entries +
             " < 10 THEN 'fail' ELSE 'pass' END, 0, 0, 1.5, '', '', '/out', "
             "'2026-11-26T17:00:00Z' FROM generate_series(0, " +
             std::to_string(options.rows - 1) +
             ") AS i ORDER BY i;"
             "INSERT INTO outputs (job_id, sample, output, verdict, max_abs_error, "
             "mean_abs_error, mismatches, cosine, snr_db, worst_index, worst_source, "
             "worst_target) SELECT id, 0, 'logits', verdict, 1e-6 * (id % 7), 1e-7, 0, 0.9999, "
             "80.0, '[0]', 1.0, 1.0 FROM jobs;"
             "COMMIT; ANALYZE;");
  PQfinish(conn);
}

double PgBareReadSeconds(const std::string& url) {
  PGconn* conn = PgConnect(url);
  const auto start = Clock::now();
  PGresult* result =
      PQexec(conn, (std::string("SELECT id, ") + kBareColumns + " FROM jobs").c_str());
  size_t bytes = 0;
  for (int row = 0; row < PQntuples(result); ++row) {
    for (int col = 0; col < PQnfields(result); ++col) bytes += PQgetlength(result, row, col);
  }
  const double seconds = SecondsSince(start);
  PQclear(result);
  PQfinish(conn);
  if (bytes == 0) Die("postgres: no rows read");
  return seconds;
}

// ---- Report ----------------------------------------------------------------------------------

// Best of three: the machine is shared, the minimum is the least disturbed run.
double BestOf3(const std::function<double()>& measure) {
  double best = measure();
  for (int repeat = 1; repeat < 3; ++repeat) best = std::min(best, measure());
  return best;
}

void Report(const char* backend, const std::string& location, const Options& options,
            const std::function<double()>& bare_write, const std::function<void()>& fill,
            const std::function<double()>& bare_read) {
  const double write_ms = StoreWriteMs(*OpenStore(location), options.jobs);
  const double bare_ms = bare_write();
  std::printf("%-10s RecordJob            %8.3f ms/job   bare INSERT %8.3f ms   ratio %5.2f\n",
              backend, write_ms, bare_ms, write_ms / bare_ms);
  fill();
  std::unique_ptr<Store> store = OpenStore(location);
  const double bare_read_s = BestOf3(bare_read);
  size_t latest_rows = 0;
  size_t job_rows = 0;
  const double latest_s = BestOf3([&] {
    const auto start = Clock::now();
    auto rows = store->Latest({"", ""});
    if (!rows.ok()) Die(rows.status().ToString());
    latest_rows = rows->size();
    return SecondsSince(start);
  });
  const double jobs_s = BestOf3([&] {
    const auto start = Clock::now();
    auto rows = store->Jobs({"", ""});
    if (!rows.ok()) Die(rows.status().ToString());
    job_rows = rows->size();
    return SecondsSince(start);
  });
  const double glob_s = BestOf3([&] {
    const auto start = Clock::now();
    auto rows = store->Latest({"m1*", ""});
    if (!rows.ok()) Die(rows.status().ToString());
    return SecondsSince(start);
  });
  size_t failing_rows = 0;
  const double regressions_s = BestOf3([&] {
    const auto start = Clock::now();
    convgate::store::HistoryQuery query;
    query.failing_latest_only = true;
    auto rows = store->Jobs(query);
    if (!rows.ok()) Die(rows.status().ToString());
    failing_rows = rows->size();
    return SecondsSince(start);
  });
  std::printf("%-10s bare SELECT of %zu jobs %7.3f s\n", backend, job_rows, bare_read_s);
  std::printf("%-10s Latest (%zu rows)     %8.3f s      ratio %5.2f\n", backend, latest_rows,
              latest_s, latest_s / bare_read_s);
  std::printf("%-10s Latest 'm1*'          %8.3f s      ratio %5.2f\n", backend, glob_s,
              glob_s / bare_read_s);
  std::printf("%-10s Jobs (%zu rows)    %8.3f s      ratio %5.2f\n", backend, job_rows, jobs_s,
              jobs_s / bare_read_s);
  std::printf("%-10s Jobs, failing latest (%zu rows, --regressions) %8.3f s   ratio %5.2f\n",
              backend, failing_rows, regressions_s, regressions_s / bare_read_s);
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int arg = 1; arg < argc; ++arg) {
    const std::string name = argv[arg];
    if (arg + 1 >= argc) Die("usage: " + name + " takes a value");
    const std::string value = argv[++arg];
    if (name == "--sqlite") {
      options.sqlite = value;
    } else if (name == "--postgres") {
      options.postgres = value;
    } else if (name == "--jobs") {
      options.jobs = std::stoi(value);
    } else if (name == "--rows") {
      options.rows = std::stoi(value);
    } else if (name == "--entries") {
      options.entries = std::stoi(value);
    } else {
      Die("unknown option " + name);
    }
  }
  if (options.jobs < 1 || options.entries < 1 || options.rows < options.entries) {
    Die("--jobs >= 1, --entries >= 1, --rows >= --entries");
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);
  std::printf("store bench: %d RecordJobs of 2 outputs; history over %d job rows (%d entries)\n",
              options.jobs, options.rows, options.entries);
  if (!options.sqlite.empty()) {
    std::filesystem::remove(options.sqlite);
    std::filesystem::remove(options.sqlite + "-wal");
    std::filesystem::remove(options.sqlite + "-shm");
    Report(
        "sqlite", options.sqlite, options,
        [&] { return SqliteBareWriteMs(options.sqlite, options.jobs); },
        [&] {
          // The history store holds only the filled rows: the written bench jobs go first.
          sqlite3* db = SqliteOpen(options.sqlite);
          SqliteExec(db,
                     "DELETE FROM outputs; DELETE FROM jobs; DELETE FROM runs; "
                     "DROP TABLE bare_jobs");
          sqlite3_close(db);
          SqliteFill(options.sqlite, options);
        },
        [&] { return SqliteBareReadSeconds(options.sqlite); });
  }
  if (!options.postgres.empty()) {
    Report(
        "postgresql", options.postgres, options,
        [&] { return PgBareWriteMs(options.postgres, options.jobs); },
        [&] {
          PGconn* conn = PgConnect(options.postgres);
          PgExec(conn, "TRUNCATE outputs, jobs, runs; DROP TABLE bare_jobs");
          PQfinish(conn);
          PgFill(options.postgres, options);
        },
        [&] { return PgBareReadSeconds(options.postgres); });
  }
  return 0;
}
