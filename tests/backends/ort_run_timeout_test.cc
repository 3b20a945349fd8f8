#include "backends/onnxruntime/ort_run_timeout.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace convgate::backends {
namespace {

#if CONVGATE_WITH_ONNXRUNTIME

// One watchdog thread serves every run: each run's flag is set at its own deadline, a run that
// ends first is never flagged, and thousands of runs cost no thread each.
TEST(OrtRunTimeout, EachRunIsStoppedAtItsOwnDeadlineOnly) {
  std::atomic<int> slow_stops{0}, other_stops{0};
  auto patient = std::make_unique<OrtRunTimeout>([&] { ++other_stops; }, 3600.0);
  auto slow = std::make_unique<OrtRunTimeout>([&] { ++slow_stops; }, 0.05);
  {
    OrtRunTimeout quick([&] { ++other_stops; }, 0.05);  // ends at once, before its deadline
  }
  OrtRunTimeout none([&] { ++other_stops; }, 0.0);  // no limit: nothing watches it
  const auto start = std::chrono::steady_clock::now();
  while (!slow->fired() && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(slow->fired()) << "the 0.05 s deadline did not fire within 60 s";
  EXPECT_EQ(slow_stops.load(), 1);
  EXPECT_FALSE(patient->fired());
  EXPECT_FALSE(none.fired());
  // Many short runs in turn, each watched and forgotten.
  for (int run = 0; run < 2000; ++run) {
    OrtRunTimeout watched([&] { ++other_stops; }, 600.0);
    EXPECT_FALSE(watched.fired());
  }
  EXPECT_FALSE(patient->fired());
  EXPECT_EQ(other_stops.load(), 0);
}

#endif  // CONVGATE_WITH_ONNXRUNTIME

}  // namespace
}  // namespace convgate::backends
