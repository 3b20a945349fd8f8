// Store on PostgreSQL (store.h) through libpqxx. Private to the store module: callers use
// Store::Open with a postgresql:// URL or a libpq keyword string.
//
// Many machines write one database at once: each RecordJob is its own transaction (job row and
// output rows), ids come from identity columns, and migrations on open are serialised by an
// advisory lock, so concurrent batches never see a half-made schema.
#pragma once

#include <memory>
#include <pqxx/connection>
#include <string>
#include <string_view>

#include "convgate/store/store.h"
#include "store/postgres_watchdog.h"

namespace convgate::store {

class PostgresStore : public Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);
  ~PostgresStore() override;

  Result<int> SchemaVersion() override;
  Result<int64_t> BeginRun(const RunRecord& run) override;
  Status EndRun(int64_t run_id, const std::string& ended_at) override;
  Status RecordJob(int64_t run_id, const JobRecord& job) override;
  Result<std::optional<Verdict>> FinalVerdict(const std::string& entry_key) override;
  Result<int64_t> CountJobs(const std::string& entry_key) override;
  Result<std::vector<HistoryRow>> Latest(const HistoryQuery& query) override;
  Result<std::vector<HistoryRow>> Jobs(const HistoryQuery& query) override;

 private:
  PostgresStore(std::string connection_string, std::string location, int busy_timeout_ms,
                int call_deadline_ms);
  // Arms the watchdog for one call on the connection, disarms it when the call returns.
  class Call;
  int Socket() const;
  // The error of the call under way: the deadline when the watchdog cut it off, else what
  // libpqxx threw (CurrentPostgresError). Only inside a catch block.
  Status Failure(std::string_view what);
  // (Re)connects and sets the session up; statements are prepared by Prepare, after Migrate.
  Status Connect();
  Status Migrate();
  Status Prepare();
  // The job and its outputs in one transaction; throws what libpqxx throws.
  void InsertJob(int64_t run_id, const JobRecord& job);
  Result<std::vector<HistoryRow>> Query(const std::string& statement, const HistoryQuery& query);

  std::string connection_string_;  // with its password: never printed
  std::string location_;           // redacted: safe to print
  int busy_timeout_ms_;
  std::unique_ptr<pqxx::connection> connection_;
  std::unique_ptr<Watchdog> watchdog_;
};

}  // namespace convgate::store
