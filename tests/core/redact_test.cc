// Secrets out of recorded command lines: one function for report.json, --json, the store's runs
// row and a batch's (issue 32, item 1).
#include "convgate/core/redact.h"

#include <gtest/gtest.h>

namespace convgate {
namespace {

TEST(RedactTest, UrlPasswords) {
  EXPECT_EQ(RedactPasswords("postgresql://u:SECRET@/x?host=/nonexistent"),
            "postgresql://u:***@/x?host=/nonexistent");
  EXPECT_EQ(RedactPasswords("postgres://ci:p@ss@db.example/convgate"),
            "postgres://ci:***@db.example/convgate");
  EXPECT_EQ(RedactPasswords("postgres://ci:p/w@db.example/convgate"),
            "postgres://ci:***@db.example/convgate");
  EXPECT_EQ(RedactPasswords("--store=postgresql://ci:pw@db/convgate"),
            "--store=postgresql://ci:***@db/convgate");
  EXPECT_EQ(RedactPasswords("postgresql://db.example:5432/convgate"),
            "postgresql://db.example:5432/convgate");
  EXPECT_EQ(RedactPasswords("postgresql://ci@db.example:5432/convgate"),
            "postgresql://ci@db.example:5432/convgate");
  EXPECT_EQ(RedactPasswords("a postgresql://a:1@h and postgresql://b:2@h"),
            "a postgresql://a:***@h and postgresql://b:***@h");
}

TEST(RedactTest, PasswordParametersAndKeywords) {
  EXPECT_EQ(RedactPasswords("postgresql://db/convgate?user=ci&password=s3cret&x=1"),
            "postgresql://db/convgate?user=ci&password=***&x=1");
  EXPECT_EQ(RedactPasswords("host=/nonexistent password=SECRET dbname=x"),
            "host=/nonexistent password=*** dbname=x");
  EXPECT_EQ(RedactPasswords("host=db password='s3 cr\\'et' user=ci"),
            "host=db password=*** user=ci");
  // A keyword value is ended by white space only: '&' is part of it.
  EXPECT_EQ(RedactPasswords("password=a&b user=ci"), "password=*** user=ci");
  EXPECT_EQ(RedactPasswords("PASSWORD=x"), "PASSWORD=***");
  EXPECT_EQ(RedactPasswords("--db-password=x"), "--db-password=***");
  // Not a password: inside a path.
  EXPECT_EQ(RedactPasswords("results/password=x.db"), "results/password=x.db");
  EXPECT_EQ(RedactPasswords("model.onnx"), "model.onnx");
  EXPECT_EQ(RedactPasswords(""), "");
}

TEST(RedactTest, CommandLines) {
  const std::vector<std::string> argv = {"convgate",
                                         "run",
                                         "m.onnx",
                                         "--store",
                                         "postgresql://u:SECRET@/x?host=/nonexistent",
                                         "--store=host=/x password=SECRET",
                                         "--token",
                                         "hf_SECRET",
                                         "--token=hf_SECRET",
                                         "--out",
                                         "o"};
  const std::vector<std::string> redacted = RedactCommandLine(argv);
  ASSERT_EQ(redacted.size(), argv.size());
  for (const std::string& arg : redacted) EXPECT_EQ(arg.find("SECRET"), std::string::npos) << arg;
  EXPECT_EQ(redacted[4], "postgresql://u:***@/x?host=/nonexistent");
  EXPECT_EQ(redacted[5], "--store=host=/x password=***");
  EXPECT_EQ(redacted[7], "***");
  EXPECT_EQ(redacted[8], "--token=***");
  EXPECT_EQ(redacted[10], "o");
  // Idempotent: a batch redacts again what it was given.
  EXPECT_EQ(RedactCommandLine(redacted), redacted);
}

}  // namespace
}  // namespace convgate
