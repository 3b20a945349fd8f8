// The output folder's lock: a second batch of the same shard is refused while the first holds
// it, other shards are not, and the lock ends with its holder.
#include "convgate/batch/out_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;

class OutLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "out_lock_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    out_ = pattern;
  }
  void TearDown() override { fs::remove_all(out_); }

  fs::path out_;
};

TEST_F(OutLockTest, ASecondRunOfTheSameShardIsRefusedNamingTheFolder) {
  Result<OutLock> first = OutLock::Acquire(out_, 0, 1);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<OutLock> second = OutLock::Acquire(out_, 0, 1);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find(out_.string() + " is in use by another convgate batch"),
            std::string::npos)
      << second.status().message();
  EXPECT_NE(second.status().message().find("give another --out"), std::string::npos);
}

TEST_F(OutLockTest, OtherShardsShareTheFolder) {
  Result<OutLock> shard0 = OutLock::Acquire(out_, 0, 3);
  Result<OutLock> shard1 = OutLock::Acquire(out_, 1, 3);
  ASSERT_TRUE(shard0.ok()) << shard0.status().ToString();
  EXPECT_TRUE(shard1.ok()) << shard1.status().ToString();
  Result<OutLock> again = OutLock::Acquire(out_, 1, 3);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("shard 1/3"), std::string::npos)
      << again.status().message();
}

TEST_F(OutLockTest, TheLockEndsWithItsHolder) {
  {
    Result<OutLock> held = OutLock::Acquire(out_, 0, 1);
    ASSERT_TRUE(held.ok());
  }
  EXPECT_TRUE(OutLock::Acquire(out_, 0, 1).ok());
}

TEST_F(OutLockTest, ALinkPlantedInPlaceOfTheLockIsNotFollowed) {
  const fs::path victim = out_ / "victim";
  fs::create_directory(victim);
  fs::create_symlink(victim / "created", out_ / ".convgate-batch-0-of-1.lock");
  Result<OutLock> lock = OutLock::Acquire(out_, 0, 1);
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(fs::exists(victim / "created"));
}

}  // namespace
}  // namespace convgate::batch
