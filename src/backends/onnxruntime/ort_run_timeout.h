// Stopping an ONNX Runtime run that takes too long (--run-timeout). A model can run forever (a
// Loop with a 1e12 trip count) and nothing in the run returns control; ORT's run termination flag
// (RunOptions::SetTerminate) is the one way to stop it, set from another thread. ORT checks the
// flag before each node it executes, subgraph nodes included, so a run stops within one node.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace convgate::backends {

// Sets `options`' termination flag once `seconds` have passed, unless destroyed first. Holds a
// thread of its own for its lifetime (none when seconds <= 0: no limit). Construct it before
// Session::Run and destroy it after; fired() then says whether the run was stopped by it.
class OrtRunTimeout {
 public:
  OrtRunTimeout(Ort::RunOptions& options, double seconds);
  ~OrtRunTimeout();
  OrtRunTimeout(const OrtRunTimeout&) = delete;
  OrtRunTimeout& operator=(const OrtRunTimeout&) = delete;

  bool fired() const { return fired_.load(); }

 private:
  void Watch(Ort::RunOptions& options, double seconds);

  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;  // guarded by mutex_
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace convgate::backends
