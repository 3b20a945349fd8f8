#include <gtest/gtest.h>

#include <chrono>
#include <pqxx/pqxx>
#include <thread>

#include "store/store_test_backend.h"

namespace convgate::store::testing {
namespace {

class PostgresTestBackend : public TestBackend {
 public:
  explicit PostgresTestBackend(std::string admin_url) : admin_url_(std::move(admin_url)) {}

  std::string FreshLocation(const std::string& name) override {
    database_ = DatabaseNameFor(name);
    Admin("DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
    Admin("CREATE DATABASE " + database_);
    return WithDatabase(admin_url_, database_);
  }

  void SetSchemaVersion(const std::string& location, int version) override {
    Execute(location, "UPDATE schema_version SET version = " + std::to_string(version));
  }

  void Execute(const std::string& location, const std::string& sql) override {
    Retry(location, sql, [&] {
      pqxx::connection connection(location);
      pqxx::work txn(connection);
      txn.exec0(sql);
      txn.commit();
    });
  }

  void Cleanup() override {
    if (!database_.empty()) Admin("DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }

 private:
  // CREATE/DROP DATABASE cannot run inside a transaction block.
  void Admin(const std::string& sql) {
    Retry(admin_url_, sql, [&] {
      pqxx::connection connection(admin_url_);
      pqxx::nontransaction txn(connection);
      txn.exec0(sql);
    });
  }

  // On a loaded machine a connection can time out, and two tests creating databases at once make
  // PostgreSQL refuse one ("template1 is being accessed by other users"): both pass on a retry.
  // Tried for kDeadlineSeconds, then the failure names the server, the statement and the error.
  template <typename Call>
  void Retry(const std::string& url, const std::string& sql, const Call& call) {
    constexpr double kDeadlineSeconds = 120.0;
    const auto start = std::chrono::steady_clock::now();
    std::string last_error;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
           kDeadlineSeconds) {
      try {
        call();
        return;
      } catch (const std::exception& error) {
        last_error = error.what();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    ADD_FAILURE() << "waited " << kDeadlineSeconds << " s for the PostgreSQL server at " << url
                  << " (the postgres ctest fixture) to run: " << sql
                  << "; last error: " << last_error;
  }

  std::string admin_url_;
  std::string database_;
};

}  // namespace

std::unique_ptr<TestBackend> MakePostgresTestBackend(const std::string& admin_url) {
  return std::make_unique<PostgresTestBackend>(admin_url);
}

}  // namespace convgate::store::testing
