// Store on SQLite (store.h). Private to the store module: callers use Store::Open.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "convgate/store/store.h"

struct sqlite3;

namespace convgate::store {

class SqliteStore : public Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);
  ~SqliteStore() override;

  Result<int> SchemaVersion() override;
  Result<int64_t> BeginRun(const RunRecord& run) override;
  Status EndRun(int64_t run_id, const std::string& ended_at) override;
  Status RecordJob(int64_t run_id, const JobRecord& job) override;
  Result<std::optional<Verdict>> FinalVerdict(const std::string& entry_key) override;
  Result<int64_t> CountJobs(const std::string& entry_key) override;
  Result<std::vector<HistoryRow>> Latest(const HistoryQuery& query) override;
  Result<std::vector<HistoryRow>> Jobs(const HistoryQuery& query) override;

 private:
  SqliteStore(sqlite3* db, std::string location);
  Status Migrate();
  Status InsertJob(int64_t run_id, const JobRecord& job);
  Status Exec(std::string_view sql, std::string_view what);
  Result<std::vector<HistoryRow>> Query(const std::string& sql, const HistoryQuery& query);
  // The last SQLite error as a Status naming the store and `what` was being done.
  Status Error(std::string_view what) const;

  sqlite3* db_;
  std::string location_;
};

}  // namespace convgate::store
