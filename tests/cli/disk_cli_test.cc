// Issue 10's disk findings on the real binary: atomic writes never follow a symlink planted in a
// shared folder (finding 5), a cache entry in use is never pruned (finding 8).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;
using testing::StartedProcess;

const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();
const std::string kHang = (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/hang.py").string();
constexpr double kStartSeconds = 60.0;

class DiskCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    testing::CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    ::unsetenv("CONVGATE_CACHE_MAX_BYTES");
    ::unsetenv("CONVGATE_CACHE_MIN_AGE_SECONDS");
  }
  void TearDown() override {
    ::unsetenv("CONVGATE_CACHE_DIR");
    testing::CliTest::TearDown();
  }

  // Starts convgate through a shell that waits for the file GO and then execs it, so convgate's
  // pid (the shell's: exec keeps it) is known before convgate runs.
  StartedProcess StartWhenReleased(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        "/bin/sh", "-c",
        "while [ ! -e '" + Path("GO") + "' ]; do sleep 0.02; done; exec \"$0\" \"$@\"",
        Binary().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::StartProcess(argv);
  }
  void Release() { std::ofstream(Path("GO")) << "go"; }

  // Plants "<path>.tmp-<pid>" -> the victim file, the name convgate's writers used to open with
  // O_CREAT | O_TRUNC.
  void Plant(const std::string& path, pid_t pid) {
    fs::create_symlink(Path("victim"), path + ".tmp-" + std::to_string(pid));
  }
  std::string Victim() const {
    Result<std::string> contents = ReadFile(Path("victim"));
    return contents.ok() ? *contents : "(missing)";
  }
};

TEST_F(DiskCliTest, WritersNeverFollowASymlinkPlantedInASharedFolder) {
  ASSERT_TRUE(WriteFileAtomic(Path("victim"), "precious").ok());
  fs::create_directories(Path("shared"));
  StartedProcess compare =
      StartWhenReleased({"compare", kTinyCnn, kTinyCnn, "--out", Path("shared"), "--save-inputs",
                         Path("shared/in.npz"), "--save-outputs", Path("shared/ref.npz")});
  for (const char* name : {"report.json", "verify_result.json", "junit.xml", "in.npz", "ref.npz"}) {
    Plant(Path("shared/") + name, compare.pid);
  }
  StartedProcess convert =
      StartWhenReleased({"convert", kTinyCnn, "--to", "opset:17", "-o", Path("shared/model.onnx")});
  Plant(Path("shared/model.onnx"), convert.pid);
  Release();
  ProcessResult compared = testing::WaitProcess(compare);
  ProcessResult converted = testing::WaitProcess(convert);
  EXPECT_EQ(compared.exit_code, 0) << Describe(compared);
  EXPECT_EQ(converted.exit_code, 0) << Describe(converted);
  EXPECT_EQ(Victim(), "precious");
  std::ifstream report(Path("shared/report.json"));
  EXPECT_TRUE(json::parse(report, nullptr, false).is_object());
  for (const char* written : {"in.npz", "ref.npz", "model.onnx"}) {
    ProcessResult inspect = Convgate({"inspect", Path("shared/") + written});
    EXPECT_EQ(inspect.exit_code, 0) << written << ": " << Describe(inspect);
  }
}

// Finding 8: `verify` without -o compares the cache entry itself; a `cache prune` run meanwhile
// (another process) must leave that entry alone, and say so.
TEST_F(DiskCliTest, PruneLeavesTheEntryAVerifyIsUsingAndSaysSo) {
  const std::string pid_file = Path("runner.pid");
  StartedProcess verify = testing::StartProcess(
      {Binary().string(), "verify", kTinyCnn, "--to", "opset:17", "--target-exec",
       "/usr/bin/python3 '" + kHang + "' '" + pid_file + "' {model} {outputs}", "--exec-timeout",
       "0"});
  ASSERT_GT(verify.pid, 0);
  ASSERT_TRUE(testing::WaitFor([&] { return testing::ReadPidFile(pid_file) > 0; }, kStartSeconds))
      << "the target never started running";
  ProcessResult pruned = Convgate({"cache", "prune", "--max-bytes", "0", "--min-age", "0"});
  EXPECT_EQ(pruned.exit_code, 0) << Describe(pruned);
  EXPECT_NE(pruned.out.find("removed 0 of 1 entries"), std::string::npos) << pruned.out;
  EXPECT_NE(pruned.out.find("in use by another convgate (locked)"), std::string::npos)
      << pruned.out;
  ProcessResult listed = Convgate({"cache", "ls", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << Describe(listed);
  EXPECT_EQ(json::parse(listed.out)["entries"].size(), 1u) << listed.out;
  ::kill(verify.pid, SIGINT);
  ProcessResult verified = testing::WaitProcess(verify);
  EXPECT_EQ(verified.exit_code, 130) << Describe(verified);
  // Nobody uses it any more: now it goes.
  ProcessResult again =
      Convgate({"cache", "prune", "--max-bytes", "0", "--min-age", "0", "--json"});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  const json result = json::parse(again.out);
  EXPECT_EQ(result["removed"].size(), 1u) << again.out;
  EXPECT_TRUE(result["in_use"].empty()) << again.out;
}

}  // namespace
}  // namespace convgate
