// The process's one hf_runner.py host (runtime/hf_runner.py's docstring states its protocol):
// every Hugging Face model a convgate process loads, and the inputs made for them, go through it,
// so transformers, torch and optimum are imported once per process rather than once per model and
// step (a verify of the tiny gpt2 started five Python processes, ~6 s of imports each).
//
// Started on first use and never stopped by convgate: at exit its stdin closes and it ends (it
// also watches its parent). A request that does not finish in time, or a host that dies, stops it;
// the next request starts another, a new generation in which no model is loaded yet (HfModel
// loads again).
//
// Thread safety: Request serializes whole exchanges, so one host serves a comparison's two
// threads one request at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "convgate/core/child_process.h"
#include "convgate/core/status.h"

namespace convgate::backends {

class HfHost {
 public:
  static HfHost& Instance();

  // Sends `request` and returns the response line ({"ok": true, ...}); a failure response is its
  // Status (code and message as the host sent them). Starts the host first when it is not
  // running. A response that takes longer than `timeout_seconds` stops the host: Unavailable
  // naming `what` ("/m/gpt2: the hf runner (loading the model)") and `limit_flag`
  // ("--exec-timeout"). `generation`, when given, receives the host generation that answered.
  Result<std::string> Request(const nlohmann::json& request, double timeout_seconds,
                              const std::string& what, std::string_view limit_flag,
                              uint64_t* generation = nullptr);

  // Sends {"op": "warm", ...} when the host is already running (a verify whose source is not a
  // Hugging Face folder never starts Python for it); errors are ignored: the load that needs the
  // libraries says what is wrong.
  void Warm(const nlohmann::json& runtimes);

  // The host's stderr so far (its last 64 KB): what a failed request leaves for the report.
  std::string log() const;
  // The host running now (0: none yet); a model loaded in an older one must be loaded again.
  uint64_t generation() const;
  uint64_t NewModelId();

 private:
  HfHost() = default;
  // Starts the host and reads its start-up line. REQUIRES: mutex_ held.
  Status Start(double timeout_seconds, const std::string& what);
  // The Status for a host that ended (or was stopped) while `what` waited.
  Status Ended(const std::string& what, double limit_seconds, std::string_view limit_flag) const;

  mutable std::mutex mutex_;
  std::unique_ptr<ChildProcess> child_;
  uint64_t generation_ = 0;
  uint64_t next_model_id_ = 1;
  std::string log_;
};

}  // namespace convgate::backends
