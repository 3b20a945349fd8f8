// ChildProcess on /bin/sh and /bin/cat: line exchange, how a child ended, timeouts, stderr, and a
// child gone before a write (no SIGPIPE).
#include "convgate/core/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>

namespace convgate {
namespace {

std::unique_ptr<ChildProcess> StartOk(const std::vector<std::string>& argv) {
  Result<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(argv, SubprocessOptions());
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  return child.ok() ? std::move(child).value() : nullptr;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ChildProcessTest, ExchangesLinesWithOneProcess) {
  std::unique_ptr<ChildProcess> cat = StartOk({"/bin/cat"});
  ASSERT_NE(cat, nullptr);
  for (const std::string line : {"first", "", "{\"ok\": true}"}) {
    ASSERT_TRUE(cat->WriteLine(line, 5).ok());
    Result<std::string> echoed = cat->ReadLine(5);
    ASSERT_TRUE(echoed.ok()) << echoed.status().ToString();
    EXPECT_EQ(*echoed, line);
  }
  EXPECT_TRUE(cat->running());
}

TEST(ChildProcessTest, AChildThatEndsSaysHowWithItsStderr) {
  std::unique_ptr<ChildProcess> child =
      StartOk({"/bin/sh", "-c", "echo half-a-line | tr -d '\\n'; echo oops >&2; exit 3"});
  ASSERT_NE(child, nullptr);
  Result<std::string> line = child->ReadLine(5);
  EXPECT_EQ(line.status().code(), StatusCode::kUnavailable);
  ASSERT_FALSE(child->running());
  EXPECT_EQ(child->ended().exit_code, 3);
  EXPECT_EQ(child->ended().Describe(), "exited with code 3");
  EXPECT_EQ(child->ended().stderr_tail, "oops\n");
  // Writing to it now is an error, not a SIGPIPE.
  EXPECT_EQ(child->WriteLine("more", 1).code(), StatusCode::kUnavailable);
}

TEST(ChildProcessTest, WritingToAChildThatClosedItsInputIsAnError) {
  std::unique_ptr<ChildProcess> child = StartOk({"/bin/sh", "-c", "exec 0<&-; sleep 5"});
  ASSERT_NE(child, nullptr);
  Status written = Status::OK();
  // The first writes may land in the socket's buffer before the close is seen.
  for (int attempt = 0; attempt < 100 && written.ok(); ++attempt) {
    written = child->WriteLine(std::string(1 << 16, 'x'), 1);
  }
  EXPECT_EQ(written.code(), StatusCode::kUnavailable) << written.ToString();
}

TEST(ChildProcessTest, AWaitPastItsTimeoutKillsTheChild) {
  std::unique_ptr<ChildProcess> child = StartOk({"/bin/sleep", "60"});
  ASSERT_NE(child, nullptr);
  const auto start = std::chrono::steady_clock::now();
  Result<std::string> line = child->ReadLine(0.3);
  EXPECT_EQ(line.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(SecondsSince(start), 5.0);
  ASSERT_FALSE(child->running());
  EXPECT_TRUE(child->ended().timed_out);
  EXPECT_EQ(child->ended().signal, SIGKILL);
}

TEST(ChildProcessTest, DestroyingEndsAChildThatIgnoresItsInput) {
  std::unique_ptr<ChildProcess> child = StartOk({"/bin/sleep", "60"});
  ASSERT_NE(child, nullptr);
  const pid_t pid = child->pid();
  const auto start = std::chrono::steady_clock::now();
  child.reset();  // stdin closed, then SIGKILL after the grace (2 s)
  EXPECT_LT(SecondsSince(start), 10.0);
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: the pid is gone
}

TEST(ChildProcessTest, AMissingProgramIsNotFound) {
  Result<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start({"/no/such/program"}, SubprocessOptions());
  EXPECT_EQ(child.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace convgate
