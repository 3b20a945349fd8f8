#include "convgate/bench/measure.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace convgate::bench {
namespace {

// A model that sleeps `ms` per run, counts its runs and the most it saw at once, and fails on run
// number `fail_at` (1-based; 0: never).
class SleepyModel : public backends::Model {
 public:
  SleepyModel(double ms, bool concurrent, int fail_at = 0)
      : ms_(ms), concurrent_(concurrent), fail_at_(fail_at) {}
  const Signature& signature() const override { return signature_; }
  bool concurrent_runs() const override { return concurrent_; }
  Result<TensorMap> Run(const TensorMap&, const std::vector<std::string>&) override {
    const int run = ++runs_;
    const int now = ++in_flight_;
    int seen = most_in_flight_.load();
    while (now > seen && !most_in_flight_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms_));
    --in_flight_;
    if (run == fail_at_) return Status::Unavailable("the runtime fell over");
    return TensorMap();
  }
  int runs() const { return runs_; }
  int most_in_flight() const { return most_in_flight_; }

 private:
  Signature signature_;
  double ms_;
  bool concurrent_;
  int fail_at_;
  std::atomic<int> runs_{0}, in_flight_{0}, most_in_flight_{0};
};

Result<Measurement> MeasureModel(SleepyModel& model, const BenchSettings& settings,
                                 const std::string& backend = "fake") {
  static const TensorMap kSample;
  return Measure(
      model, [](size_t) -> const TensorMap& { return kSample; }, 1, settings, backend);
}

TEST(MeasureTest, FirstWarmupAndCountedIterations) {
  SleepyModel model(2.0, false);
  Result<Measurement> m = MeasureModel(model, {.warmup = 3, .iterations = 20});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(model.runs(), 1 + 3 + 20);
  EXPECT_EQ(m->latencies_ms.size(), 20u);
  EXPECT_EQ(m->warmup, 3);
  for (double ms : m->latencies_ms) EXPECT_GE(ms, 2.0);
  EXPECT_GE(m->first_inference_ms, 2.0);
  // One at a time: throughput is at most 1000 / 2 ms.
  EXPECT_LE(m->throughput, 500.0 + 1e-9);
  EXPECT_GT(m->throughput, 50.0);
}

TEST(MeasureTest, TimedRunStopsAtTheDeadlineButMeasuresTheMinimum) {
  SleepyModel model(5.0, false);
  Result<Measurement> m = MeasureModel(model, {.warmup = 0, .seconds = 0.001, .min_iterations = 7});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->latencies_ms.size(), 7u);
}

TEST(MeasureTest, StreamsRunConcurrentlyOnlyWhereTheBackendAllows) {
  SleepyModel concurrent(5.0, true);
  Result<Measurement> m = MeasureModel(concurrent, {.warmup = 0, .iterations = 40, .streams = 4});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->streams, 4);
  EXPECT_EQ(m->latencies_ms.size(), 40u);
  EXPECT_GE(concurrent.most_in_flight(), 2);
  EXPECT_TRUE(m->streams_note.empty());

  SleepyModel serial(1.0, false);
  m = MeasureModel(serial, {.warmup = 0, .iterations = 10, .streams = 4}, "torch");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->streams, 1);
  EXPECT_EQ(serial.most_in_flight(), 1);
  EXPECT_NE(m->streams_note.find("the torch backend runs one request at a time"), std::string::npos)
      << m->streams_note;
}

TEST(MeasureTest, AFailedRunStopsTheMeasurementNamingIt) {
  SleepyModel first(0.1, false, 1);
  Result<Measurement> m = MeasureModel(first, {.warmup = 2, .iterations = 5});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("the first inference"), std::string::npos);

  SleepyModel later(0.1, false, 1 + 2 + 4);  // the fourth measured run
  m = MeasureModel(later, {.warmup = 2, .iterations = 5});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("measured run 4"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("the runtime fell over"), std::string::npos);
}

}  // namespace
}  // namespace convgate::bench
