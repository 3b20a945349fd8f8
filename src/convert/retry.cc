#include "convert/retry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdlib>

#include "convgate/core/backoff.h"
#include "convgate/core/units.h"

namespace convgate::convert {
namespace {

// The longest wait between two attempts, so a large --retries cannot stall a pipeline for hours.
constexpr double kMaxBackoffSeconds = 60.0;
// Lines of a converter's output kept in the record and quoted in messages.
constexpr size_t kLogTailLines = 20;

bool MentionsTransientProblem(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view phrase :
       {"temporarily", "temporary failure", "try again", "connection", "timed out"}) {
    if (lower.find(phrase) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

bool IsTransientFailure(const SubprocessResult& run) {
  if (run.interrupted_by != 0) return false;  // convgate itself is stopping
  if (run.timed_out || run.hung) return true;
  // A converter that aborts (SIGABRT) or crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL) raised the
  // signal itself and will again; one killed from outside may not be.
  if (run.signal != 0) {
    return run.signal != SIGABRT && run.signal != SIGSEGV && run.signal != SIGBUS &&
           run.signal != SIGFPE && run.signal != SIGILL;
  }
  if (run.exit_code == kExitTempFail) return true;
  return run.exit_code != 0 && MentionsTransientProblem(run.stderr_tail);
}

AttemptResult AttemptFromProcess(const SubprocessResult& run) {
  AttemptResult attempt;
  const std::string& log = run.stderr_tail.empty() ? run.stdout_tail : run.stderr_tail;
  attempt.log_tail = TailLines(log, kLogTailLines);
  if (run.succeeded()) return attempt;
  attempt.error = run.timed_out ? ConversionError::kTimedOut : ConversionError::kFailed;
  attempt.problem = run.Describe();
  attempt.transient = IsTransientFailure(run);
  return attempt;
}

Result<double> ConverterStallSeconds() {
  const char* value = std::getenv(kStallSecondsEnv);
  if (value == nullptr || value[0] == '\0') return kDefaultStallSeconds;
  Result<double> seconds = ParseDuration(value);
  if (!seconds.ok()) return seconds.status().WithContext(kStallSecondsEnv);
  return seconds;
}

double StallSecondsOrDefault() {
  Result<double> seconds = ConverterStallSeconds();
  return seconds.ok() ? *seconds : kDefaultStallSeconds;
}

double BackoffSeconds(double base_seconds, int retry) {
  return ExponentialBackoff(base_seconds, kMaxBackoffSeconds, retry - 1);
}

AttemptResult RunConversionScript(const std::vector<std::string>& argv, double timeout_seconds,
                                  SubprocessResult* process) {
  // argparse's usage-error exit, which the scripts use for every bad request.
  constexpr int kScriptUsageExit = 2;
  SubprocessOptions options;
  options.timeout_seconds = timeout_seconds;
  options.stall_seconds = StallSecondsOrDefault();
  Result<SubprocessResult> run = RunSubprocess(argv, options);
  AttemptResult attempt;
  if (!run.ok()) {
    attempt.error = ConversionError::kConverterMissing;
    attempt.problem = run.status().message();
    return attempt;
  }
  if (process != nullptr) *process = *run;
  attempt = AttemptFromProcess(*run);
  if (run->exit_code == kScriptUsageExit) {
    attempt.error = ConversionError::kBadRequest;
    attempt.transient = false;
  }
  return attempt;
}

}  // namespace convgate::convert
