// A base fixture for tests of the real `convgate` binary: a private temporary folder per test
// (kept when the test fails, for inspection), running the binary, and describing a result.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/subprocess.h"
#include "testing/torch_fixtures.h"

namespace convgate::testing {

inline std::string Describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// Every hint of report.json's result `index`: its own, then those its output's aggregates row holds
// for every failing sample (docs/guide.md, "Result files"), as a script reading the report would.
inline nlohmann::json HintsOf(const nlohmann::json& report, size_t index) {
  const nlohmann::json& result = report["results"][index];
  nlohmann::json hints = result.value("hints", nlohmann::json::array());
  if (result["verdict"] != "fail") return hints;
  for (const nlohmann::json& row : report["aggregates"]) {
    if (row["output"] != result["output"]) continue;
    for (const nlohmann::json& hint : row.value("hints", nlohmann::json::array())) {
      hints.push_back(hint);
    }
  }
  return hints;
}

// The project venv's python (scripts/setup.sh): CONVGATE_VENV, else CONVGATE_DEPS/venv, else
// ~/.cache/convgate-deps/venv. The path may not exist: callers skip, saying why.
inline std::filesystem::path ProjectVenvPython() {
  const char* venv = std::getenv("CONVGATE_VENV");
  if (venv && venv[0]) return std::filesystem::path(venv) / "bin/python";
  const char* deps = std::getenv("CONVGATE_DEPS");
  const char* home = std::getenv("HOME");
  const std::filesystem::path root =
      deps && deps[0] ? std::filesystem::path(deps)
                      : std::filesystem::path(home ? home : "/") / ".cache/convgate-deps";
  return root / "venv/bin/python";
}

class CliTest : public ::testing::Test {
 protected:
  static std::filesystem::path Binary() {
    return std::filesystem::path(CONVGATE_BINARY_DIR) / "src/cli/convgate";
  }
  static std::filesystem::path Tool(const std::string& name) {
    return std::filesystem::path(CONVGATE_BINARY_DIR) / name;
  }

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("convgate_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Runs convgate with `args`; a crash fails the test.
  ProcessResult Convgate(std::vector<std::string> args) {
    args.insert(args.begin(), Binary().string());
    ProcessResult result = RunProcess(args);
    EXPECT_EQ(result.signal, 0) << "convgate crashed; stderr:\n" << result.err;
    return result;
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

// CliTest over the torchvision fixtures (scripts/make_torch_fixtures.sh): the folder is found once
// per suite; every test is skipped, and says why, in a build without libtorch.
class TorchCliTest : public CliTest {
 protected:
  static void SetUpTestSuite() {
#if CONVGATE_WITH_TORCH
    fixtures_ = TorchFixtureFolder(fixture_error_);
#endif
  }
  void SetUp() override {
#if !CONVGATE_WITH_TORCH
    GTEST_SKIP() << "built without libtorch (CONVGATE_WITH_TORCH=OFF): no torchvision fixtures";
#endif
    ASSERT_TRUE(fixture_error_.empty()) << fixture_error_;
    CliTest::SetUp();
  }

  static std::string Fixture(const std::string& file) {
    return (std::filesystem::path(fixtures_) / file).string();
  }

  inline static std::string fixtures_;
  inline static std::string fixture_error_;
};

}  // namespace convgate::testing
