// The subprocess runner: exit codes, captured output, timeouts that kill the whole process group,
// missing programs, forked bodies.
#include "convgate/core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace convgate {
namespace {

TEST(SubprocessTest, CapturesExitCodeAndBothStreams) {
  Result<SubprocessResult> run =
      RunSubprocess({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_EQ(run->signal, 0);
  EXPECT_FALSE(run->timed_out);
  EXPECT_FALSE(run->succeeded());
  EXPECT_EQ(run->stdout_tail, "out\n");
  EXPECT_EQ(run->stderr_tail, "err\n");
  EXPECT_EQ(run->Describe(), "exited with code 3");
}

TEST(SubprocessTest, AddressSpaceLimitBindsTheChild) {
  SubprocessOptions options;
  options.address_space_bytes = int64_t{256} << 20;
  // The shell reports its own RLIMIT_AS in KiB.
  Result<SubprocessResult> limited = RunSubprocess({"/bin/sh", "-c", "ulimit -v"}, options);
  ASSERT_TRUE(limited.ok()) << limited.status().ToString();
  EXPECT_EQ(limited->stdout_tail, "262144\n");
}

TEST(SubprocessTest, ArgumentsAreNotInterpretedByAShell) {
  Result<SubprocessResult> run = RunSubprocess({"/bin/echo", "$HOME", "a;b", "*"}, {});
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->succeeded());
  EXPECT_EQ(run->stdout_tail, "$HOME a;b *\n");
}

TEST(SubprocessTest, SearchesPathAndAddsEnvironment) {
  SubprocessOptions options;
  options.extra_env = {"CONVGATE_SUBPROCESS_TEST=hello"};
  Result<SubprocessResult> run =
      RunSubprocess({"sh", "-c", "printf %s \"$CONVGATE_SUBPROCESS_TEST\""}, options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->stdout_tail, "hello");
}

// shown_argv0 is what /proc/PID/cmdline (and so ps) shows; the file run is still argv[0].
TEST(SubprocessTest, ShownArgv0IsWhatPsSees) {
  SubprocessOptions options;
  options.shown_argv0 = "shown-name";
  Result<SubprocessResult> run = RunSubprocess({"/bin/cat", "/proc/self/cmdline"}, options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->stdout_tail, std::string("shown-name\0/proc/self/cmdline\0", 30));
}

TEST(SubprocessTest, AMissingProgramIsNotFound) {
  Result<SubprocessResult> run = RunSubprocess({"convgate-no-such-program"}, {});
  EXPECT_EQ(run.status().code(), StatusCode::kNotFound);
  EXPECT_NE(run.status().message().find("'convgate-no-such-program': no such program in PATH"),
            std::string::npos)
      << run.status().message();
  EXPECT_EQ(RunSubprocess({"/nonexistent/prog"}, {}).status().code(), StatusCode::kNotFound);
}

TEST(SubprocessTest, TimeoutKillsTheWholeProcessGroup) {
  const std::filesystem::path marker = std::filesystem::temp_directory_path() /
                                       ("convgate_subprocess_marker_" + std::to_string(::getpid()));
  std::filesystem::remove(marker);
  SubprocessOptions options;
  options.timeout_seconds = 0.3;
  options.kill_grace_seconds = 0.2;
  // The grandchild would write the marker after 0.8 s if it survived its parent's timeout.
  const auto start = std::chrono::steady_clock::now();
  Result<SubprocessResult> run = RunSubprocess(
      {"/bin/sh", "-c", "(sleep 0.8; touch '" + marker.string() + "') & sleep 30"}, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->signal, SIGTERM);
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(run->Describe().find("timed out after"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the grandchild outlived the timeout";
}

TEST(SubprocessTest, AProcessIgnoringSigtermIsKilledAfterTheGrace) {
  SubprocessOptions options;
  options.timeout_seconds = 0.2;
  options.kill_grace_seconds = 0.2;
  Result<SubprocessResult> run =
      RunSubprocess({"/bin/sh", "-c", "trap '' TERM; sleep 30 & wait; sleep 30"}, options);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->signal, SIGKILL);
  EXPECT_LT(run->seconds, 5.0);
}

TEST(SubprocessTest, OnlyTheTailOfALongOutputIsKept) {
  SubprocessOptions options;
  options.max_captured_bytes = 100;
  Result<SubprocessResult> run = RunSubprocess({"/bin/sh", "-c",
                                                "i=0; while [ $i -lt 2000 ]; do echo line$i >&2; "
                                                "i=$((i+1)); done"},
                                               options);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->stderr_tail.size(), 100u);
  EXPECT_TRUE(run->stderr_truncated);
  EXPECT_EQ(TailLines(run->stderr_tail, 1), "line1999");
}

TEST(SubprocessTest, ForkedBodyReportsItsExitCodeAndOutput) {
  Result<SubprocessResult> run = RunInForkedChild(
      [] {
        std::fputs("from the child\n", stderr);
        return 7;
      },
      {});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 7);
  EXPECT_EQ(run->stderr_tail, "from the child\n");
}

TEST(SubprocessTest, ACrashInAForkedBodyIsASignalNotACrashOfTheCaller) {
  Result<SubprocessResult> run = RunInForkedChild(
      [] {
        std::abort();
        return 0;
      },
      {});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->signal, SIGABRT);
  EXPECT_NE(run->Describe().find("signal 6"), std::string::npos);
}

TEST(SubprocessTest, AHangingForkedBodyTimesOut) {
  SubprocessOptions options;
  options.timeout_seconds = 0.2;
  Result<SubprocessResult> run = RunInForkedChild(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return 0;
      },
      options);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->timed_out);
  EXPECT_LT(run->seconds, 5.0);
}

// A group that uses no CPU (a shell waiting on a sleeping grandchild: a deadlock looks the same)
// is hung once the stall time passes, long before the timeout, and the grandchild goes too.
TEST(SubprocessTest, AGroupWithoutCpuProgressIsHung) {
  SubprocessOptions options;
  options.timeout_seconds = 30.0;
  options.stall_seconds = 0.5;
  options.kill_grace_seconds = 0.2;
  Result<SubprocessResult> run = RunSubprocess({"/bin/sh", "-c", "sleep 30 & wait"}, options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_TRUE(run->hung);
  EXPECT_FALSE(run->timed_out);
  EXPECT_FALSE(run->succeeded());
  EXPECT_GE(run->seconds, 0.5);
  EXPECT_LT(run->seconds, 5.0);
  EXPECT_EQ(run->Describe(), "hung: no CPU progress for 0.5 s");
}

// CPU time that keeps growing in any member of the group is progress: a busy grandchild keeps
// its idle parent from being hung, and only the timeout stops it.
TEST(SubprocessTest, CpuProgressInTheGroupIsNotAHang) {
  SubprocessOptions options;
  options.timeout_seconds = 1.5;
  options.stall_seconds = 0.5;
  options.kill_grace_seconds = 0.2;
  Result<SubprocessResult> run =
      RunSubprocess({"/bin/sh", "-c", "(while :; do :; done) & wait"}, options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(run->hung);
  EXPECT_TRUE(run->timed_out);
  // Without the watch, the same idle group runs until it ends by itself.
  Result<SubprocessResult> unwatched = RunSubprocess({"/bin/sh", "-c", "sleep 0.8"}, {});
  ASSERT_TRUE(unwatched.ok());
  EXPECT_TRUE(unwatched->succeeded());
}

TEST(SubprocessTest, TailLinesKeepsTheLastLines) {
  EXPECT_EQ(TailLines("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(TailLines("a\nb\nc", 5), "a\nb\nc");
  EXPECT_EQ(TailLines("only", 1), "only");
  EXPECT_EQ(TailLines("", 3), "");
  EXPECT_EQ(TailLines("a\nb", 0), "");
}

}  // namespace
}  // namespace convgate
