// Temporary folders: private, removed by their owner, and swept by the next run when their owner
// was killed outright (nobody holds their lock and their pid is gone).
#include "convgate/core/temp_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace convgate {
namespace {

namespace fs = std::filesystem;

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("convgate_temp_dir_test_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
             std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A pid that no process has: a child that has exited and been reaped.
  static pid_t DeadPid() {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
  }

  fs::path root_;
};

TEST_F(TempDirTest, IsPrivateNamedAfterThisProcessAndRemovedWithItsContents) {
  fs::path path;
  {
    Result<TempDir> dir = TempDir::Create("exec", root_);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    path = dir->path();
    const std::string prefix = "convgate-" + std::to_string(::getpid()) + "-exec-";
    EXPECT_EQ(path.filename().string().rfind(prefix, 0), 0u) << path;
    EXPECT_EQ(path.parent_path(), root_);
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
    std::ofstream(path / "inputs.npz") << "data";
    TempDir moved = std::move(dir).value();
    EXPECT_TRUE(fs::exists(path / "inputs.npz"));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(TempDirTest, SweepRemovesOnlyFoldersWhoseOwnerIsGone) {
  Result<TempDir> live = TempDir::Create("exec", root_);
  ASSERT_TRUE(live.ok());
  const fs::path dead = root_ / ("convgate-" + std::to_string(DeadPid()) + "-exec-AbC123");
  fs::create_directories(dead / "sub");
  std::ofstream(dead / "sub" / "outputs.npz") << "left behind";
  // Named after a live process (this one), unlocked and new: an owner between mkdtemp and flock.
  const fs::path young = root_ / ("convgate-" + std::to_string(::getpid()) + "-exec-Young1");
  fs::create_directories(young);
  const fs::path other = root_ / "convgate-exec-OldFormat";
  const fs::path not_ours = root_ / "something-else";
  fs::create_directories(other);
  fs::create_directories(not_ours);
  EXPECT_EQ(SweepStaleTempDirs(root_), 1);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live->path()));
  EXPECT_TRUE(fs::exists(young));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(not_ours));
}

TEST_F(TempDirTest, SweepHonoursTheLockOfAKilledOwnersSurvivingChild) {
  // A folder named after a dead pid whose lock someone still holds (a forked child of its owner
  // inherits the lock) is in use.
  const fs::path held = root_ / ("convgate-" + std::to_string(DeadPid()) + "-convert-Held12");
  fs::create_directories(held);
  const int fd = ::open(held.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  EXPECT_EQ(SweepStaleTempDirs(root_), 0);
  EXPECT_TRUE(fs::exists(held));
  ::close(fd);
  EXPECT_EQ(SweepStaleTempDirs(root_), 1);
  EXPECT_FALSE(fs::exists(held));
}

TEST_F(TempDirTest, SweepNeverFollowsASymlinkNamedLikeAFolder) {
  const fs::path victim = root_ / "victim";
  fs::create_directories(victim);
  std::ofstream(victim / "keep") << "precious";
  fs::create_directory_symlink(victim,
                               root_ / ("convgate-" + std::to_string(DeadPid()) + "-exec-Link12"));
  EXPECT_EQ(SweepStaleTempDirs(root_), 0);
  EXPECT_TRUE(fs::exists(victim / "keep"));
}

TEST_F(TempDirTest, CreateFailsWithTheReasonWhenTheRootIsMissing) {
  Result<TempDir> dir = TempDir::Create("exec", root_ / "missing");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(dir.status().message().find("No such file or directory"), std::string::npos)
      << dir.status().message();
}

}  // namespace
}  // namespace convgate
