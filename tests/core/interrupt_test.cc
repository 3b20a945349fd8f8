// Interrupts: a SIGINT or SIGTERM stops the children convgate waits for (their whole process
// group), starts nothing new, and, when the main flow cannot unwind in time or the user insists,
// ends the process after removing the registered temp folders. Children also die with a parent
// killed outright (PR_SET_PDEATHSIG). Each test forks a process of its own to signal, since an
// interrupt is for the whole process and cannot be undone.
#include "convgate/core/interrupt.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "convgate/core/subprocess.h"
#include "convgate/core/temp_dir.h"
#include "testing/subprocess.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using testing::ProcessIsRunning;
using testing::ReadPidFile;
using testing::WaitFor;

const std::string kHang = std::string(CONVGATE_SOURCE_DIR) + "/tests/fixtures/hang.py";
constexpr char kPython[] = "/usr/bin/python3";
// Python starts in well under a second; a loaded CI machine gets room to spare.
constexpr double kStartSeconds = 20.0;

class InterruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("convgate_interrupt_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // Forks a process that runs `body` and exits with its return value.
  template <typename Body>
  static pid_t Fork(Body body) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(body());
    return pid;
  }

  // Waits for the forked process; its exit code, or -signal when a signal ended it.
  static int Reap(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  // A killed process takes a moment to exit (and an orphan to be reaped).
  static bool Dies(pid_t pid) {
    return WaitFor([pid] { return !ProcessIsRunning(pid); }, 60.0);
  }

  std::string PidFile(const std::string& name) const { return (dir_ / name).string(); }

  pid_t AwaitPid(const std::string& path) const {
    pid_t pid = -1;
    WaitFor([&] { return (pid = ReadPidFile(path)) > 0; }, kStartSeconds);
    return pid;
  }

  fs::path dir_;
};

TEST_F(InterruptTest, SigintStopsTheChildsWholeGroupAndTheWaitSaysSo) {
  const std::string first = PidFile("first.pid"), second = PidFile("second.pid");
  const pid_t test_process = Fork([&] {
    InstallInterruptHandling();
    // Two processes in the child's group: the shell's background job must die too.
    const std::string script = std::string(kPython) + " " + kHang + " " + first + " & " + kPython +
                               " " + kHang + " " + second + "; wait";
    Result<SubprocessResult> run = RunSubprocess({"/bin/sh", "-c", script}, {});
    const bool said_so = run.ok() && run->interrupted_by == SIGINT && !run->succeeded() &&
                         run->Describe() == "was stopped: convgate was interrupted by SIGINT";
    return said_so ? 128 + InterruptSignal() : 1;
  });
  const pid_t first_pid = AwaitPid(first), second_pid = AwaitPid(second);
  ASSERT_GT(first_pid, 0);
  ASSERT_GT(second_pid, 0);
  ::kill(test_process, SIGINT);
  EXPECT_EQ(Reap(test_process), 130);
  EXPECT_TRUE(Dies(first_pid));
  EXPECT_TRUE(Dies(second_pid));
}

TEST_F(InterruptTest, AChildIgnoringSigtermIsKilledAfterTheGrace) {
  const std::string pid_file = PidFile("hang.pid");
  const pid_t test_process = Fork([&] {
    InstallInterruptHandling();
    SubprocessOptions options;
    options.kill_grace_seconds = 0.5;
    Result<SubprocessResult> run =
        RunSubprocess({kPython, kHang, pid_file, "--ignore-term"}, options);
    return run.ok() && run->interrupted_by == SIGTERM && run->signal == SIGKILL ? 143 : 1;
  });
  const pid_t hang = AwaitPid(pid_file);
  ASSERT_GT(hang, 0);
  ::kill(test_process, SIGTERM);
  EXPECT_EQ(Reap(test_process), 143);
  EXPECT_TRUE(Dies(hang));
}

TEST_F(InterruptTest, AForkedBodyGetsDefaultSignalsAndIsStopped) {
  const std::string pid_file = PidFile("body.pid");
  const pid_t test_process = Fork([&] {
    InstallInterruptHandling();
    Result<SubprocessResult> run = RunInForkedChild(
        [&] {
          std::ofstream(pid_file) << ::getpid();
          ::pause();  // only a signal with its default action ends this
          return 0;
        },
        {});
    return run.ok() && run->interrupted_by == SIGINT && run->signal == SIGTERM ? 130 : 1;
  });
  const pid_t body = AwaitPid(pid_file);
  ASSERT_GT(body, 0);
  ::kill(test_process, SIGINT);
  EXPECT_EQ(Reap(test_process), 130);
  EXPECT_TRUE(Dies(body));
}

TEST_F(InterruptTest, NothingStartsOnceInterrupted) {
  const pid_t test_process = Fork([] {
    InstallInterruptHandling();
    ::raise(SIGINT);  // the handler runs before raise returns
    Result<SubprocessResult> run = RunSubprocess({"/bin/true"}, {});
    Result<SubprocessResult> forked = RunInForkedChild([] { return 0; }, {});
    const bool refused =
        run.status().code() == StatusCode::kUnavailable &&
        run.status().message() == "not starting '/bin/true': interrupted by SIGINT" &&
        forked.status().message().find("interrupted by SIGINT") != std::string::npos;
    return refused && !SleepUnlessInterrupted(10) ? 0 : 1;
  });
  EXPECT_EQ(Reap(test_process), 0);
}

TEST_F(InterruptTest, AMainFlowThatDoesNotUnwindIsEndedAfterTheGraceWithItsTempFoldersRemoved) {
  const std::string dir_file = PidFile("temp_dir");
  const pid_t test_process = Fork([&] {
    InstallInterruptHandling();
    Result<TempDir> temp = TempDir::Create("test", dir_);
    if (!temp.ok()) return 1;
    std::ofstream(dir_file) << temp->path().string();
    while (true) ::sleep(60);  // deaf to interrupts, like a long inference
  });
  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir_file); }, kStartSeconds));
  std::string temp_path;
  std::ifstream(dir_file) >> temp_path;
  ASSERT_TRUE(fs::is_directory(temp_path));
  const auto start = std::chrono::steady_clock::now();
  ::kill(test_process, SIGINT);
  EXPECT_EQ(Reap(test_process), 130);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(seconds, kInterruptGraceSeconds - 0.5);
  EXPECT_FALSE(fs::exists(temp_path));
}

TEST_F(InterruptTest, ASecondSignalEndsTheProcessAtOnce) {
  const std::string dir_file = PidFile("temp_dir");
  const pid_t test_process = Fork([&] {
    InstallInterruptHandling();
    Result<TempDir> temp = TempDir::Create("test", dir_);
    if (!temp.ok()) return 1;
    std::ofstream(dir_file) << temp->path().string();
    while (true) ::sleep(60);
  });
  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir_file); }, kStartSeconds));
  std::string temp_path;
  std::ifstream(dir_file) >> temp_path;
  const auto start = std::chrono::steady_clock::now();
  ::kill(test_process, SIGTERM);
  ::usleep(200 * 1000);
  ::kill(test_process, SIGINT);
  EXPECT_EQ(Reap(test_process), 143);  // the first signal names the exit code
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, kInterruptGraceSeconds - 1.0);
  EXPECT_FALSE(fs::exists(temp_path));
}

TEST_F(InterruptTest, ChildrenDieWithAParentKilledOutright) {
  const std::string spawned = PidFile("spawned.pid"), forked = PidFile("forked.pid");
  const pid_t spawner = Fork([&] {
    return RunSubprocess({kPython, kHang, spawned}, {}).ok() ? 0 : 1;
  });
  const pid_t forker = Fork([&] {
    Result<SubprocessResult> run = RunInForkedChild(
        [&] {
          std::ofstream(forked) << ::getpid();
          ::pause();
          return 0;
        },
        {});
    return run.ok() ? 0 : 1;
  });
  const pid_t spawned_pid = AwaitPid(spawned), forked_pid = AwaitPid(forked);
  ASSERT_GT(spawned_pid, 0);
  ASSERT_GT(forked_pid, 0);
  ::kill(spawner, SIGKILL);
  ::kill(forker, SIGKILL);
  EXPECT_EQ(Reap(spawner), -SIGKILL);
  EXPECT_EQ(Reap(forker), -SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(spawned_pid); }, 60.0))
      << "waited 60 s for the spawned child " << spawned_pid << " to die with its parent";
  EXPECT_TRUE(WaitFor([&] { return !ProcessIsRunning(forked_pid); }, 60.0))
      << "waited 60 s for the forked child " << forked_pid << " to die with its parent";
}

}  // namespace
}  // namespace convgate
