// Stopping an ONNX Runtime run that takes too long (--run-timeout). A model can run forever (a
// Loop with a 1e12 trip count) and nothing in the run returns control; ORT's run termination flag
// (RunOptions::SetTerminate) is the one way to stop it, set from another thread. ORT checks the
// flag before each node it executes, subgraph nodes included, so a run stops within one node.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace convgate::backends {

// Stops a run (sets its options' termination flag) once `seconds` have passed, unless destroyed
// first (none when seconds <= 0: no limit). One watchdog thread serves every run of the process,
// started by the first. Construct it before Session::Run and destroy it after; fired() then says
// whether the run was stopped by it.
class OrtRunTimeout {
 public:
  // `stop` (ORT's RunOptions::SetTerminate on the run's options) is called at the deadline, from
  // the watchdog's thread; it must only set a flag.
  OrtRunTimeout(std::function<void()> stop, double seconds);
  ~OrtRunTimeout();
  OrtRunTimeout(const OrtRunTimeout&) = delete;
  OrtRunTimeout& operator=(const OrtRunTimeout&) = delete;

  bool fired() const { return fired_.load(); }

 private:
  uint64_t id_ = 0;  // the watchdog's, 0 when not watched
  std::atomic<bool> fired_{false};
};

}  // namespace convgate::backends
