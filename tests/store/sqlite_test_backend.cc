#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "store/store_test_backend.h"

namespace convgate::store::testing {
namespace {

namespace fs = std::filesystem;

class SqliteTestBackend : public TestBackend {
 public:
  std::string FreshLocation(const std::string& name) override {
    dir_ = fs::temp_directory_path() /
           ("convgate_store_test_" + std::to_string(::getpid()) + "_" + DatabaseNameFor(name));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    return (dir_ / "convgate.db").string();
  }

  void SetSchemaVersion(const std::string& location, int version) override {
    Execute(location, "PRAGMA user_version = " + std::to_string(version));
  }

  void Execute(const std::string& location, const std::string& sql) override {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(location.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sql << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

  void Cleanup() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

 private:
  fs::path dir_;
};

}  // namespace

std::unique_ptr<TestBackend> MakeSqliteTestBackend() {
  return std::make_unique<SqliteTestBackend>();
}

}  // namespace convgate::store::testing
