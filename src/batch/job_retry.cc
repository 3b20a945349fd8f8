#include <algorithm>
#include <cctype>
#include <cmath>

#include "convgate/batch/job_policy.h"
#include "convgate/core/backoff.h"
#include "convgate/core/exit_code.h"

namespace convgate::batch {
namespace {

// EX_TEMPFAIL (sysexits.h), as src/convert/retry.h.
constexpr int kExitTempFail = 75;

bool MentionsTransient(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* sign : {"temporarily", "temporary failure", "try again", "connection"}) {
    if (text.find(sign) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

bool IsTransientJobFailure(const store::JobRecord& job) {
  // Out of memory under --job-memory: the same limit fails the same way (even when its message
  // says "Resource temporarily unavailable").
  if (job.verdict != Verdict::kError || job.error_category == "oom") return false;
  if (job.error_category == "killed") return true;
  if (job.exit_code == kExitTempFail) return true;
  // Could not run (exit 3, refined by its stage: convert-failed, load-failed, ...).
  const bool could_not_run =
      job.exit_code == static_cast<int>(ExitCode::kCannotRun) && job.signal == 0;
  return could_not_run && MentionsTransient(job.error_text);
}

std::string ErrorCategoryOfExit(int exit_code) {
  switch (static_cast<ExitCode>(exit_code)) {
    case ExitCode::kUsage:
      return "usage";
    case ExitCode::kCannotRun:
      return "cannot-run";
    case ExitCode::kInternal:
      return "internal";
    case ExitCode::kInterrupted:
    case ExitCode::kTerminated:
      return "interrupted";
    default:
      return "unexpected-exit";
  }
}

double JobRetryBackoffSeconds(int attempt) { return ExponentialBackoff(1.0, 30.0, attempt - 2); }

}  // namespace convgate::batch
