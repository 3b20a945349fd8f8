#include "convgate/core/progress.h"

#include <atomic>
#include <chrono>

namespace convgate {
namespace {

std::atomic<ProgressSink*> g_sink{nullptr};
// The innermost task of the thread that reports (the CLI's one working thread).
thread_local ProgressTask* t_innermost = nullptr;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void SetProgressSink(ProgressSink* sink) { g_sink.store(sink, std::memory_order_release); }

ProgressTask::ProgressTask(std::string task, int64_t total)
    : outer_(t_innermost), start_ns_(NowNs()) {
  state_.task = std::move(task);
  state_.total = total;
  t_innermost = this;
  Tell(false);
}

ProgressTask::~ProgressTask() {
  Tell(true);
  t_innermost = outer_;
  if (outer_ != nullptr) outer_->Tell(false);
}

void ProgressTask::Advance(int64_t done, std::string detail) {
  state_.done = done;
  state_.detail = std::move(detail);
  Tell(false);
}

void ProgressTask::Tell(bool ended) {
  ProgressSink* sink = g_sink.load(std::memory_order_acquire);
  if (sink == nullptr) return;
  state_.elapsed_seconds = static_cast<double>(NowNs() - start_ns_) / 1e9;
  sink->Update(state_, ended);
}

}  // namespace convgate
