#include "hub/retry.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

#include "convgate/core/backoff.h"
#include "convgate/core/units.h"

namespace convgate::hub {
namespace {

double UnitRandom() {
  // Jitter only spreads clients apart; it needs no reproducibility, so the OS's entropy seeds it.
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

std::optional<double> ParseHttpDate(const std::string& value, int64_t now_unix) {
  // RFC 9110's preferred form: "Sun, 06 Nov 1994 08:49:37 GMT".
  struct tm parts = {};
  const char* end = strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
  if (end == nullptr || *end != '\0') return std::nullopt;
  const int64_t when = timegm(&parts);
  return static_cast<double>(std::max<int64_t>(0, when - now_unix));
}

}  // namespace

bool IsTransient(const HttpResponse& response) {
  if (response.transport != TransportError::kNone) {
    return response.transport != TransportError::kOther;
  }
  return response.status == 429 || (response.status >= 500 && response.status < 600);
}

std::optional<double> ParseRetryAfter(const std::string& value, int64_t now_unix) {
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (value.size() > 9) return std::nullopt;  // over 30 years: not a wait
    return static_cast<double>(std::stoll(value));
  }
  return ParseHttpDate(value, now_unix);
}

double BackoffSeconds(const RetryPolicy& policy, int retry, double unit_random) {
  return ExponentialBackoff(policy.backoff_base_seconds, policy.backoff_max_seconds, retry,
                            unit_random);
}

std::string DescribeFailure(const HttpResponse& response) {
  switch (response.transport) {
    case TransportError::kConnect:
      return "cannot connect (" + response.transport_message + ")";
    case TransportError::kTimeout:
      return "timed out (" + response.transport_message + ")";
    case TransportError::kBrokenOff:
      return "connection broke off (" + response.transport_message + ")";
    case TransportError::kOther:
      return response.transport_message;
    case TransportError::kNone:
      break;
  }
  return "HTTP " + std::to_string(response.status);
}

Result<HttpResponse> WithRetries(const RetryPolicy& policy, const std::string& what,
                                 const std::function<Result<HttpResponse>()>& attempt) {
  const int attempts = std::max(1, policy.attempts);
  for (int attempt_idx = 0;; ++attempt_idx) {
    CONVGATE_ASSIGN_OR_RETURN(HttpResponse response, attempt());
    if (!IsTransient(response) || attempt_idx + 1 >= attempts) return response;
    const double left =
        std::chrono::duration<double>(policy.deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      return Status::Unavailable(what + ": " + DescribeFailure(response) +
                                 "; no retry: the fetch's deadline has passed");
    }
    double wait = BackoffSeconds(policy, attempt_idx, UnitRandom());
    const auto retry_after = response.headers.find("retry-after");
    if (response.transport == TransportError::kNone && retry_after != response.headers.end()) {
      const std::optional<double> asked =
          ParseRetryAfter(retry_after->second, static_cast<int64_t>(std::time(nullptr)));
      if (asked && *asked > policy.retry_after_max_seconds) {
        return Status::Unavailable(
            what + ": " + DescribeFailure(response) + " asking to retry after " +
            std::to_string(static_cast<int64_t>(*asked)) + " s, over the maximum of " +
            std::to_string(static_cast<int64_t>(policy.retry_after_max_seconds)) +
            " s (CONVGATE_HUB_RETRY_AFTER_MAX)");
      }
      if (asked) wait = *asked;
    }
    wait = std::min(wait, left);
    std::fprintf(stderr, "convgate: %s: %s; retry %d/%d in %s\n", what.c_str(),
                 DescribeFailure(response).c_str(), attempt_idx + 1, attempts - 1,
                 FormatSeconds(wait).c_str());
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

}  // namespace convgate::hub
