// Store locations: which backend a spelling names, passwords kept out of what is printed, and
// history globs as PostgreSQL regular expressions.
#include "convgate/store/location.h"

#include <gtest/gtest.h>

#include "store/glob_regex.h"

namespace convgate::store {
namespace {

TEST(StoreLocationTest, SpellingChoosesTheBackend) {
  EXPECT_EQ(StoreBackendOf("postgresql://u@db.example/convgate"), StoreBackend::kPostgres);
  EXPECT_EQ(StoreBackendOf("postgres://db.example/convgate"), StoreBackend::kPostgres);
  EXPECT_EQ(StoreBackendOf("postgresql:///convgate?host=/tmp/sock"), StoreBackend::kPostgres);
  EXPECT_EQ(StoreBackendOf("host=/tmp/sock dbname=convgate"), StoreBackend::kPostgres);
  EXPECT_EQ(StoreBackendOf("  dbname=convgate"), StoreBackend::kPostgres);
  EXPECT_EQ(StoreBackendOf("mysql://db.example/x"), StoreBackend::kUnsupported);
  EXPECT_EQ(StoreBackendOf("results/convgate.db"), StoreBackend::kSqlite);
  EXPECT_EQ(StoreBackendOf(":memory:"), StoreBackend::kSqlite);
  EXPECT_EQ(StoreBackendOf("out/a=b.db"), StoreBackend::kSqlite);
  EXPECT_EQ(StoreBackendOf("hosts.db"), StoreBackend::kSqlite);
}

TEST(StoreLocationTest, PasswordsAreRedacted) {
  EXPECT_EQ(RedactStoreLocation("postgresql://ci:s3cret@db.example:5432/convgate"),
            "postgresql://ci:***@db.example:5432/convgate");
  // An unencoded '@' inside the password: the last '@' of the authority ends the userinfo.
  EXPECT_EQ(RedactStoreLocation("postgres://ci:p@ss@db.example/convgate"),
            "postgres://ci:***@db.example/convgate");
  EXPECT_EQ(RedactStoreLocation("postgresql://db.example/convgate?user=ci&password=s3cret&x=1"),
            "postgresql://db.example/convgate?user=ci&password=***&x=1");
  EXPECT_EQ(RedactStoreLocation("host=db dbname=convgate password=s3cret user=ci"),
            "host=db dbname=convgate password=*** user=ci");
  EXPECT_EQ(RedactStoreLocation("host=db password='s3 cr\\'et' user=ci"),
            "host=db password=*** user=ci");
  // Nothing to hide: unchanged, ':' in a host:port untouched.
  EXPECT_EQ(RedactStoreLocation("postgresql://ci@db.example:5432/convgate"),
            "postgresql://ci@db.example:5432/convgate");
  EXPECT_EQ(RedactStoreLocation("postgresql://db.example:5432/convgate"),
            "postgresql://db.example:5432/convgate");
  EXPECT_EQ(RedactStoreLocation("results/password=x.db"), "results/password=x.db");
}

TEST(StoreLocationTest, CommandLineArgumentsAreRedacted) {
  EXPECT_EQ(RedactStoreArgument("--store=postgresql://ci:pw@db/convgate"),
            "--store=postgresql://ci:***@db/convgate");
  EXPECT_EQ(RedactStoreArgument("postgresql://ci:pw@db/convgate"),
            "postgresql://ci:***@db/convgate");
  EXPECT_EQ(RedactStoreArgument("--store"), "--store");
  EXPECT_EQ(RedactStoreArgument("-j"), "-j");
}

TEST(GlobRegexTest, GlobsBecomeAnchoredRegularExpressions) {
  EXPECT_EQ(GlobToRegex(""), "");
  EXPECT_EQ(GlobToRegex("tiny*"), "^tiny.*$");
  EXPECT_EQ(GlobToRegex("bert.v?"), "^bert\\.v.$");
  EXPECT_EQ(GlobToRegex("[a-c]x"), "^[a-c]x$");
  EXPECT_EQ(GlobToRegex("[^a]"), "^[^a]$");
  EXPECT_EQ(GlobToRegex("[]]"), "^[]]$");
  EXPECT_EQ(GlobToRegex("[\\]"), "^[\\\\]$");
  EXPECT_EQ(GlobToRegex("a[b"), "^a\\[b$");
  EXPECT_EQ(GlobToRegex("(x)+$"), "^\\(x\\)\\+\\$$");
}

}  // namespace
}  // namespace convgate::store
