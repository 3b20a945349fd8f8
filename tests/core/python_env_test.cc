// The one setting that locates the project venv (CONVGATE_VENV, then CONVGATE_DEPS, then HOME).
#include "convgate/core/python_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

namespace convgate {
namespace {

// Restores an environment variable at the end of a test.
class SavedEnv {
 public:
  explicit SavedEnv(const char* name) : name_(name) {
    if (const char* value = ::getenv(name)) value_ = value;
  }
  ~SavedEnv() {
    if (value_) {
      ::setenv(name_, value_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> value_;
};

TEST(PythonEnvTest, TheVenvComesFromOneSetting) {
  SavedEnv venv("CONVGATE_VENV"), deps("CONVGATE_DEPS"), home("HOME");
  ::setenv("CONVGATE_VENV", "/nonexistent/venv", 1);
  EXPECT_EQ(VenvFolder(), std::filesystem::path("/nonexistent/venv"));
  Result<std::filesystem::path> python = VenvPython();
  EXPECT_EQ(python.status().code(), StatusCode::kNotFound);
  EXPECT_NE(python.status().message().find("/nonexistent/venv"), std::string::npos);
  EXPECT_NE(python.status().message().find("run ./scripts/setup.sh"), std::string::npos);
  ::unsetenv("CONVGATE_VENV");
  ::setenv("CONVGATE_DEPS", "/deps", 1);
  EXPECT_EQ(VenvFolder(), std::filesystem::path("/deps/venv"));
  ::unsetenv("CONVGATE_DEPS");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(VenvFolder(), std::filesystem::path("/home/someone/.cache/convgate-deps/venv"));
}

}  // namespace
}  // namespace convgate
