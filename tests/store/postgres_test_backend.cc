#include <gtest/gtest.h>

#include <pqxx/pqxx>

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
    try {
      pqxx::connection connection(location);
      pqxx::work txn(connection);
      txn.exec0(sql);
      txn.commit();
    } catch (const std::exception& error) {
      ADD_FAILURE() << sql << " on " << location << ": " << error.what();
    }
  }

  void Cleanup() override {
    if (!database_.empty()) Admin("DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }

 private:
  // CREATE/DROP DATABASE cannot run inside a transaction block.
  void Admin(const std::string& sql) {
    try {
      pqxx::connection connection(admin_url_);
      pqxx::nontransaction txn(connection);
      txn.exec0(sql);
    } catch (const std::exception& error) {
      ADD_FAILURE() << sql << " on " << admin_url_
                    << " (does the postgres ctest fixture run?): " << error.what();
    }
  }

  std::string admin_url_;
  std::string database_;
};

}  // namespace

std::unique_ptr<TestBackend> MakePostgresTestBackend(const std::string& admin_url) {
  return std::make_unique<PostgresTestBackend>(admin_url);
}

}  // namespace convgate::store::testing
