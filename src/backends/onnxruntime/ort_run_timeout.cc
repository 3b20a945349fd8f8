#include "backends/onnxruntime/ort_run_timeout.h"

#include <chrono>

namespace convgate::backends {

OrtRunTimeout::OrtRunTimeout(Ort::RunOptions& options, double seconds) {
  if (!(seconds > 0)) return;
  thread_ = std::thread([this, &options, seconds] { Watch(options, seconds); });
}

OrtRunTimeout::~OrtRunTimeout() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  finished_.notify_one();
  thread_.join();
}

void OrtRunTimeout::Watch(Ort::RunOptions& options, double seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto limit = std::chrono::duration<double>(seconds);
  if (finished_.wait_for(lock, limit, [this] { return done_; })) return;
  fired_ = true;
  // ORT documents SetTerminate as the way to stop a Run in progress from another thread; it only
  // sets a flag, so holding the lock while calling it is harmless.
  options.SetTerminate();
}

}  // namespace convgate::backends
