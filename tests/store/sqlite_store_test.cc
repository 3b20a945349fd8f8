// What only the SQLite store does: files that are not databases, ":memory:", and locations that
// name no backend.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "convgate/store/store.h"

namespace convgate::store {
namespace {

namespace fs = std::filesystem;

TEST(SqliteStoreTest, NotADatabaseIsDataLoss) {
  const fs::path path =
      fs::temp_directory_path() / ("convgate_not_a_db_" + std::to_string(::getpid()) + ".db");
  {
    std::FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("this is not an SQLite database, just text long enough to have a header.......\n",
               file);
    std::fclose(file);
  }
  Result<std::unique_ptr<Store>> store = Store::Open({path.string()});
  fs::remove(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDataLoss) << store.status().ToString();
}

TEST(SqliteStoreTest, InMemoryStoreWorks) {
  Result<std::unique_ptr<Store>> store = Store::Open({":memory:"});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Result<int> version = (*store)->SchemaVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, kSchemaVersion);
}

TEST(SqliteStoreTest, OtherUrlSchemesAreUnimplementedWithoutTheirPassword) {
  Result<std::unique_ptr<Store>> store = Store::Open({"mysql://me:hunter2@db.example/convgate"});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(store.status().message().find("postgresql://"), std::string::npos)
      << store.status().message();
}

}  // namespace
}  // namespace convgate::store
