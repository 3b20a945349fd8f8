#include "backends/onnxruntime/ort_run_timeout.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace convgate::backends {
namespace {

using Clock = std::chrono::steady_clock;

// One thread for every run in the process, sleeping until the earliest deadline of the runs it
// watches. A thread per run cost ~2 ms a run on this 2-core machine (created, scheduled beside
// ONNX Runtime's spinning pool, joined): `run` of a 3 ms classifier spent 40% of its time there.
class Watchdog {
 public:
  static Watchdog& Instance() {
    // Never destroyed: runs may end during static destruction, and the thread must outlive them.
    static Watchdog* watchdog = new Watchdog();
    return *watchdog;
  }

  uint64_t Watch(std::function<void()> stop, double seconds, std::atomic<bool>& fired) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t id = next_id_++;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(std::min(seconds, 1e9)));
    runs_.emplace(id, Run{std::move(stop), deadline, &fired});
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
    // The thread sleeps until the earliest deadline it knew of; only an earlier one must wake it.
    if (deadline < wake_at_) changed_.notify_one();
    return id;
  }

  void Forget(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    runs_.erase(id);  // the thread finds out when it wakes; nothing to wake it for
  }

 private:
  struct Run {
    std::function<void()> stop;
    Clock::time_point deadline;
    std::atomic<bool>* fired;
  };

  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      const auto now = Clock::now();
      wake_at_ = Clock::time_point::max();
      for (auto& [id, run] : runs_) {
        if (run.deadline <= now) {
          if (!run.fired->exchange(true)) {
            // ORT documents SetTerminate as the way to stop a Run in progress from another
            // thread; it only sets a flag, so holding the lock while calling it is harmless.
            run.stop();
          }
        } else if (run.deadline < wake_at_) {
          wake_at_ = run.deadline;
        }
      }
      if (wake_at_ == Clock::time_point::max()) {
        changed_.wait(lock);
      } else {
        changed_.wait_until(lock, wake_at_);
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<uint64_t, Run> runs_;  // guarded by mutex_
  uint64_t next_id_ = 1;
  Clock::time_point wake_at_ = Clock::time_point::min();  // before the thread first looks
  std::thread thread_;
};

}  // namespace

OrtRunTimeout::OrtRunTimeout(std::function<void()> stop, double seconds) {
  if (!(seconds > 0)) return;
  id_ = Watchdog::Instance().Watch(std::move(stop), seconds, fired_);
}

OrtRunTimeout::~OrtRunTimeout() {
  if (id_ != 0) Watchdog::Instance().Forget(id_);
}

}  // namespace convgate::backends
