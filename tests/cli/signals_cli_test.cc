// Issue 10, finding 4 on the real binary: SIGINT, SIGTERM and SIGKILL sent to convgate while it
// waits for an exec runner or an external converter (tests/fixtures/hang.py, which never ends).
// INT and TERM: the child is gone, the temp folders are gone, and convgate exits 130 or 143.
// KILL: the child still dies (PR_SET_PDEATHSIG), and the next run sweeps what was left.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessIsRunning;
using testing::ProcessResult;
using testing::StartedProcess;
using testing::WaitFor;

const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();
const std::string kHang = (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/hang.py").string();
// Starting convgate, ONNX Runtime and a Python interpreter on a loaded 2-core machine.
constexpr double kStartSeconds = 60.0;
// A child killed with its parent is reaped by init within milliseconds; this is slack.
constexpr double kDeathSeconds = 10.0;

class SignalsCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    testing::CliTest::SetUp();
    // Every convgate this test starts keeps its temp folders and its cache here.
    fs::create_directories(dir_ / "tmp");
    ::setenv("TMPDIR", (dir_ / "tmp").c_str(), 1);
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TMPDIR");
    ::unsetenv("CONVGATE_CACHE_DIR");
    testing::CliTest::TearDown();
  }

  // Starts convgate with `args` and waits until its child has started (written its pid).
  StartedProcess Start(std::vector<std::string> args) {
    args.insert(args.begin(), Binary().string());
    StartedProcess process = testing::StartProcess(args);
    EXPECT_GT(process.pid, 0);
    child_ = -1;
    EXPECT_TRUE(
        WaitFor([&] { return (child_ = testing::ReadPidFile(PidFile())) > 0; }, kStartSeconds))
        << "the child never started";
    return process;
  }

  std::string PidFile() const { return Path("child.pid"); }
  std::string HangCommand(const std::string& extra = "") const {
    return "/usr/bin/python3 '" + kHang + "' '" + PidFile() + "'" + extra;
  }
  std::string Runner(const std::string& extra = "") const {
    return HangCommand(extra) + " {model} {inputs} {outputs}";
  }
  std::string Converter() const { return HangCommand() + " {src} {out}"; }

  // The entries of a folder (none when it does not exist).
  static std::vector<std::string> Entries(const fs::path& dir) {
    std::vector<std::string> names;
    std::error_code error;
    for (auto it = fs::directory_iterator(dir, error); !error && it != fs::directory_iterator();
         it.increment(error)) {
      names.push_back(it->path().filename().string());
    }
    return names;
  }
  std::vector<std::string> TempEntries() const { return Entries(dir_ / "tmp"); }
  std::vector<std::string> CacheWorkDirs() const {
    return Entries(dir_ / "cache" / "conversions" / ".tmp");
  }

  pid_t child_ = -1;
};

std::string Join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += name + " ";
  return text;
}

TEST_F(SignalsCliTest, SigintStopsTheExecRunnerRemovesItsFolderAndExits130) {
  StartedProcess convgate = Start({"compare", kTinyCnn, kTinyCnn, "--target-exec", Runner(),
                                   "--exec-timeout", "0", "--out", Path("results")});
  ASSERT_EQ(TempEntries().size(), 1u) << "the exec run's folder: " << Join(TempEntries());
  ::kill(convgate.pid, SIGINT);
  ProcessResult r = testing::WaitProcess(convgate);
  EXPECT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_NE(r.err.find("convgate: interrupted by SIGINT"), std::string::npos) << r.err;
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(child_); }, kDeathSeconds));
  EXPECT_TRUE(TempEntries().empty()) << Join(TempEntries());
  // The gate still reports, and says why it did not finish.
  std::ifstream in(Path("results/verify_result.json"));
  ASSERT_TRUE(in.good()) << Describe(r);
  const json result = json::parse(in);
  EXPECT_EQ(result["verify_passed"], false);
  EXPECT_NE(result["error"].get<std::string>().find("interrupted by SIGINT"), std::string::npos)
      << result.dump();
}

TEST_F(SignalsCliTest, SigtermKillsARunnerThatIgnoresItAfterTheGraceAndExits143) {
  StartedProcess convgate =
      Start({"run", kTinyCnn, "--exec", Runner(" --ignore-term"), "--exec-timeout", "0"});
  ::kill(convgate.pid, SIGTERM);
  ProcessResult r = testing::WaitProcess(convgate);
  EXPECT_EQ(r.exit_code, 143) << Describe(r);
  EXPECT_NE(r.err.find("interrupted by SIGTERM"), std::string::npos) << r.err;
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(child_); }, kDeathSeconds));
  EXPECT_TRUE(TempEntries().empty()) << Join(TempEntries());
}

TEST_F(SignalsCliTest, SigkillTakesTheRunnerAlongAndTheNextRunSweepsTheFolder) {
  StartedProcess convgate = Start({"run", kTinyCnn, "--exec", Runner(), "--exec-timeout", "0"});
  ::kill(convgate.pid, SIGKILL);
  ProcessResult killed = testing::WaitProcess(convgate);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(child_); }, kDeathSeconds))
      << "the runner outlived convgate";
  const std::vector<std::string> left = TempEntries();
  ASSERT_EQ(left.size(), 1u) << Join(left);
  EXPECT_EQ(left[0].rfind("convgate-" + std::to_string(convgate.pid) + "-exec-", 0), 0u) << left[0];
  ProcessResult next = Convgate({"inspect", kTinyCnn});
  EXPECT_EQ(next.exit_code, 0) << Describe(next);
  EXPECT_TRUE(TempEntries().empty()) << Join(TempEntries());
}

TEST_F(SignalsCliTest, SigintStopsAnExternalConverterWithoutRetryingOrLeavingFiles) {
  StartedProcess convgate = Start(
      {"convert", kTinyCnn, "--converter", Converter(), "-o", Path("out.onnx"), "--retries", "3"});
  ASSERT_EQ(CacheWorkDirs().size(), 1u) << Join(CacheWorkDirs());
  ::kill(convgate.pid, SIGINT);
  ProcessResult r = testing::WaitProcess(convgate);
  EXPECT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_NE(r.err.find("was stopped: convgate was interrupted by SIGINT"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("attempt 2"), std::string::npos) << r.err;
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(child_); }, kDeathSeconds));
  EXPECT_FALSE(fs::exists(Path("out.onnx")));
  EXPECT_TRUE(CacheWorkDirs().empty()) << Join(CacheWorkDirs());
  EXPECT_TRUE(TempEntries().empty()) << Join(TempEntries());
}

TEST_F(SignalsCliTest, SigtermStopsAnUncachedConversionAndRemovesItsTempFolder) {
  StartedProcess convgate = Start(
      {"convert", kTinyCnn, "--converter", Converter(), "-o", Path("out.onnx"), "--no-cache"});
  ASSERT_EQ(TempEntries().size(), 1u) << Join(TempEntries());
  ::kill(convgate.pid, SIGTERM);
  ProcessResult r = testing::WaitProcess(convgate);
  EXPECT_EQ(r.exit_code, 143) << Describe(r);
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(child_); }, kDeathSeconds));
  EXPECT_TRUE(TempEntries().empty()) << Join(TempEntries());
}

TEST_F(SignalsCliTest, SigkillTakesTheConverterAlongAndTheNextConversionSweepsItsWorkDir) {
  StartedProcess convgate =
      Start({"convert", kTinyCnn, "--converter", Converter(), "-o", Path("out.onnx")});
  ::kill(convgate.pid, SIGKILL);
  EXPECT_EQ(testing::WaitProcess(convgate).signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(child_); }, kDeathSeconds))
      << "the converter outlived convgate";
  ASSERT_EQ(CacheWorkDirs().size(), 1u) << Join(CacheWorkDirs());
  ProcessResult next =
      Convgate({"convert", kTinyCnn, "--to", "opset:17", "-o", Path("opset17.onnx")});
  EXPECT_EQ(next.exit_code, 0) << Describe(next);
  EXPECT_TRUE(CacheWorkDirs().empty()) << Join(CacheWorkDirs());
}

// A converter started through a shell: the child is the shell, the hang script its child. The
// parent-death signal reaches only the shell; the group's keeper kills the rest (issue 32, 9).
TEST_F(SignalsCliTest, SigkillTakesAConvertersGrandchildrenAlong) {
  const std::string through_shell = "/bin/sh -c \"" + HangCommand() + " & wait\" {src} {out}";
  StartedProcess convgate =
      Start({"convert", kTinyCnn, "--converter", through_shell, "-o", Path("out.onnx")});
  ::kill(convgate.pid, SIGKILL);
  EXPECT_EQ(testing::WaitProcess(convgate).signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(child_); }, kDeathSeconds))
      << "the converter's grandchild outlived convgate";
}

// The same for a --target-exec runner started through a shell.
TEST_F(SignalsCliTest, SigkillTakesARunnersGrandchildrenAlong) {
  const std::string through_shell =
      "/bin/sh -c \"" + HangCommand() + " & wait\" {model} {inputs} {outputs}";
  StartedProcess convgate =
      Start({"compare", kTinyCnn, kTinyCnn, "--target-exec", through_shell, "--exec-timeout", "0"});
  ::kill(convgate.pid, SIGKILL);
  EXPECT_EQ(testing::WaitProcess(convgate).signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(child_); }, kDeathSeconds))
      << "the runner's grandchild outlived convgate";
}

}  // namespace
}  // namespace convgate
