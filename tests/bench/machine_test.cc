#include "convgate/bench/machine.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <vector>

namespace convgate::bench {
namespace {

TEST(MachineTest, ParsesCpuLists) {
  EXPECT_EQ(*ParseCpuList("0-3,6"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(*ParseCpuList("2,0,2"), (std::vector<int>{0, 2}));
  for (const char* bad : {"", "a", "3-1", "0-", "-1", "1,,2", "99999"}) {
    Result<std::vector<int>> parsed = ParseCpuList(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_NE(parsed.status().message().find("not a CPU list"), std::string::npos) << bad;
    }
  }
}

TEST(MachineTest, PinsAndRestoresTheAffinity) {
  const std::string before = AffinityText();
  {
    Result<ScopedAffinity> pinned = ScopedAffinity::Pin({0});
    ASSERT_TRUE(pinned.ok()) << pinned.status().message();
    EXPECT_EQ(AffinityText(), "0");
  }
  EXPECT_EQ(AffinityText(), before);
  // A CPU the process may not use is refused, naming what it may use.
  Result<ScopedAffinity> refused = ScopedAffinity::Pin({CPU_SETSIZE - 1});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("may use only " + before), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(AffinityText(), before);
}

TEST(MachineTest, ReadsTheMachineAndWarnsAboutOversubscription) {
  MachineState state = ReadMachineState();
  EXPECT_GT(state.online_cpus, 0);
  EXPECT_GT(state.allowed_cpus, 0);
  EXPECT_FALSE(state.governor.empty());
  FinishMachineState(state, state.allowed_cpus * 4);
  bool oversubscribed = false;
  for (const std::string& warning : state.warnings) {
    if (warning.find("oversubscribed") != std::string::npos) oversubscribed = true;
  }
  EXPECT_TRUE(oversubscribed);
}

TEST(MachineTest, PeakMemoryResetsAndGrows) {
  if (!ResetPeakRss()) GTEST_SKIP() << "this kernel refuses /proc/self/clear_refs";
  const int64_t start = PeakRssBytes();
  ASSERT_GT(start, 0);
  {
    std::vector<char> block(64 << 20, 1);  // touched: resident
    EXPECT_GE(PeakRssBytes(), start + (60 << 20));
    EXPECT_EQ(block[12345], 1);
  }
  // A reset peak starts again from what is resident now (which, under ASan's quarantine of freed
  // memory, may still hold the block).
  ResetPeakRss();
  EXPECT_LE(PeakRssBytes(), CurrentRssBytes() + (4 << 20));
}

}  // namespace
}  // namespace convgate::bench
