#include "backends/hf/hf_host.h"

#include <cstdlib>

#include "backends/exec/exec_protocol.h"
#include "backends/runner/runner_protocol.h"
#include "convgate/core/install_layout.h"
#include "convgate/core/python_env.h"
#include "convgate/core/units.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

fs::path RunnerScript() { return RuntimeScript("hf_runner.py", "CONVGATE_HF_RUNNER"); }

}  // namespace

HfHost& HfHost::Instance() {
  // Never destroyed: a static destructor would wait for the host while other statics are gone;
  // at exit the kernel closes its stdin and it ends by itself.
  static HfHost* host = new HfHost();
  return *host;
}

uint64_t HfHost::NewModelId() {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_model_id_++;
}

uint64_t HfHost::generation() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return child_ && child_->running() ? generation_ : 0;
}

std::string HfHost::log() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_;
}

Status HfHost::Ended(const std::string& what, double limit_seconds,
                     std::string_view limit_flag) const {
  const SubprocessResult& ended = child_->ended();
  if (ended.timed_out) {
    return Status::Unavailable(what + " did not finish within " + FormatDuration(limit_seconds) +
                               " and was stopped (" + std::string(limit_flag) + ")");
  }
  return CommandFailure(ended, what);
}

Status HfHost::Start(double timeout_seconds, const std::string& what) {
  Result<fs::path> python = VenvPython();
  if (!python.ok()) return python.status().WithContext("the hf backend");
  const fs::path script = RunnerScript();
  std::error_code error;
  if (!fs::is_regular_file(script, error)) {
    return Status::NotFound("the hf backend's runner " + script.string() +
                            " does not exist (set CONVGATE_HF_RUNNER to its path)");
  }
  SubprocessOptions options;
  options.max_captured_bytes = kRunnerMaxLogBytes;
  options.kill_grace_seconds = kRunnerExitGraceSeconds;
  Result<std::unique_ptr<ChildProcess>> started =
      ChildProcess::Start({python->string(), script.string(), "host"}, options);
  if (!started.ok()) return started.status().WithContext(what);
  child_ = std::move(started).value();
  ++generation_;
  Result<std::string> line = child_->ReadLine(timeout_seconds);
  log_ = child_->stderr_tail();
  if (!line.ok()) return Ended(what + " (starting)", timeout_seconds, "--exec-timeout");
  Status hello = ParseRunnerResponse(*line);
  if (!hello.ok()) {
    child_.reset();
    return hello.WithContext(what);
  }
  return Status::OK();
}

Result<std::string> HfHost::Request(const nlohmann::json& request, double timeout_seconds,
                                    const std::string& what, std::string_view limit_flag,
                                    uint64_t* generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!child_ || !child_->running()) CONVGATE_RETURN_IF_ERROR(Start(timeout_seconds, what));
  if (generation != nullptr) *generation = generation_;
  const std::string line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!child_->WriteLine(line, kRunnerWriteTimeoutSeconds).ok()) {
    log_ = child_->stderr_tail();
    return Ended(what, kRunnerWriteTimeoutSeconds, limit_flag);
  }
  Result<std::string> response = child_->ReadLine(timeout_seconds);
  log_ = child_->stderr_tail();
  if (!response.ok()) {
    if (response.status().code() == StatusCode::kDataLoss) {
      return response.status().WithContext(what);
    }
    return Ended(what, timeout_seconds, limit_flag);
  }
  CONVGATE_RETURN_IF_ERROR(ParseRunnerResponse(*response));
  return response;
}

void HfHost::Warm(const nlohmann::json& runtimes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!child_ || !child_->running()) return;
  }
  // Answered before the imports start; the bound only guards against a host that hung.
  constexpr double kWarmAnswerSeconds = 60.0;
  (void)Request({{"op", "warm"}, {"runtimes", runtimes}}, kWarmAnswerSeconds,
                "the hf runner (warming up)", "a fixed 60 s");
}

}  // namespace convgate::backends
