// The databases the store tests run against: a fresh SQLite file in a temporary folder, or a fresh
// database on the throwaway PostgreSQL cluster of the `postgres` ctest fixture
// (CONVGATE_TEST_PG_URL). The contract tests (store_contract_test.cc) take one as their parameter,
// so both backends answer the same tests.
#pragma once

#include <memory>
#include <string>

namespace convgate::store::testing {

class TestBackend {
 public:
  virtual ~TestBackend() = default;
  // An empty store location of its own for the test `name`; the store is created on first open.
  virtual std::string FreshLocation(const std::string& name) = 0;
  // Marks an opened store as written by a newer convgate, the way that convgate would.
  virtual void SetSchemaVersion(const std::string& location, int version) = 0;
  // Runs `sql` (one statement both backends take) on an opened store: an older schema remade.
  virtual void Execute(const std::string& location, const std::string& sql) = 0;
  // Removes what FreshLocation made.
  virtual void Cleanup() = 0;
};

std::unique_ptr<TestBackend> MakeSqliteTestBackend();

// REQUIRES: the postgres ctest fixture runs (admin_url is its URL, dbname postgres).
std::unique_ptr<TestBackend> MakePostgresTestBackend(const std::string& admin_url);

// A test name as a PostgreSQL identifier: lower case, [a-z0-9_], at most 40 characters, unique per
// process.
std::string DatabaseNameFor(const std::string& name);

// admin_url with its database replaced by `database` (admin_url: "postgresql:///postgres?...").
std::string WithDatabase(const std::string& admin_url, const std::string& database);

}  // namespace convgate::store::testing
