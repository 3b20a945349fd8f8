#include "convgate/bench/measure.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace convgate::bench {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Result<double> TimedRun(backends::Model& model, const TensorMap& sample) {
  const Clock::time_point start = Clock::now();
  Result<TensorMap> outputs = model.Run(sample, {});
  const double ms = MillisecondsSince(start);
  if (!outputs.ok()) return outputs.status();
  return ms;
}

// Hands out iteration numbers until the count or the deadline is reached.
class Schedule {
 public:
  Schedule(const BenchSettings& settings, Clock::time_point start)
      : iterations_(settings.iterations),
        min_iterations_(settings.min_iterations),
        deadline_(start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(settings.seconds))) {}

  // The next iteration's number, or -1 when the measurement is over.
  int64_t Next() {
    const int64_t n = next_.fetch_add(1);
    if (iterations_ > 0) return n < iterations_ ? n : -1;
    if (n < min_iterations_ || Clock::now() < deadline_) return n;
    return -1;
  }

 private:
  const int64_t iterations_;
  const int64_t min_iterations_;
  const Clock::time_point deadline_;
  std::atomic<int64_t> next_{0};
};

}  // namespace

Result<Measurement> Measure(backends::Model& model,
                            const std::function<const TensorMap&(size_t)>& samples,
                            size_t sample_count, const BenchSettings& settings,
                            const std::string& backend_name) {
  Measurement result;
  result.streams = settings.streams;
  if (settings.streams > 1 && !model.concurrent_runs()) {
    result.streams = 1;
    result.streams_note = "the " + backend_name +
                          " backend runs one request at a time: --streams " +
                          std::to_string(settings.streams) + " measured as 1";
  }
  const auto sample = [&](int64_t i) -> const TensorMap& {
    return samples(static_cast<size_t>(i) % sample_count);
  };
  Result<double> first = TimedRun(model, sample(0));
  if (!first.ok()) return first.status().WithContext("the first inference");
  result.first_inference_ms = *first;
  for (int i = 0; i < settings.warmup; ++i) {
    Result<double> ms = TimedRun(model, sample(i + 1));
    if (!ms.ok()) return ms.status().WithContext("warm-up run " + std::to_string(i + 1));
  }
  result.warmup = settings.warmup;

  const Clock::time_point start = Clock::now();
  Schedule schedule(settings, start);
  std::mutex mutex;  // guards latencies_ms and error
  Status error = Status::OK();
  std::atomic<bool> failed{false};
  const auto loop = [&] {
    std::vector<double> mine;
    for (int64_t i = schedule.Next(); i >= 0 && !failed.load(); i = schedule.Next()) {
      Result<double> ms = TimedRun(model, sample(i));
      if (!ms.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (error.ok()) error = ms.status().WithContext("measured run " + std::to_string(i + 1));
        failed = true;
        break;
      }
      mine.push_back(*ms);
    }
    std::lock_guard<std::mutex> lock(mutex);
    result.latencies_ms.insert(result.latencies_ms.end(), mine.begin(), mine.end());
  };
  if (result.streams == 1) {
    loop();
  } else {
    std::vector<std::thread> threads;
    for (int s = 0; s < result.streams; ++s) threads.emplace_back(loop);
    for (std::thread& thread : threads) thread.join();
  }
  result.wall_seconds = MillisecondsSince(start) / 1000.0;
  if (!error.ok()) return error;
  result.throughput = result.wall_seconds > 0
                          ? static_cast<double>(result.latencies_ms.size()) / result.wall_seconds
                          : 0.0;
  return result;
}

}  // namespace convgate::bench
