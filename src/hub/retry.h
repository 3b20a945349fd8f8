// Retries of transient failures: which responses are transient, how long to wait before the next
// attempt (exponential backoff with full jitter, or the server's Retry-After), and the loop.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "convgate/hub/hub.h"
#include "hub/http.h"

namespace convgate::hub {

// Connection errors, timeouts, a body broken off, 429 and 5xx.
bool IsTransient(const HttpResponse& response);

// Retry-After in seconds: delta-seconds ("3") or an HTTP-date (seconds from `now_unix`, at least
// 0). nullopt when absent or malformed.
std::optional<double> ParseRetryAfter(const std::string& value, int64_t now_unix);

// The wait before retry number `retry` (0 for the first retry): uniform in
// [0, min(backoff_max, backoff_base * 2^retry)]; `unit_random` is in [0, 1).
double BackoffSeconds(const RetryPolicy& policy, int retry, double unit_random);

// A short description of a failed attempt: "connection refused (...)", "HTTP 503".
std::string DescribeFailure(const HttpResponse& response);

// Runs `attempt` up to policy.attempts times while it returns a transient response, sleeping
// between attempts (BackoffSeconds, or Retry-After when the response has one and it is within
// policy.retry_after_max_seconds). Each retry is logged on stderr as
// "convgate: <what>: <failure>; retry <n>/<max> in <s> s". Returns the last response; a
// non-OK Status from `attempt` ends the loop at once, as does a Retry-After over the maximum
// (Unavailable naming the wait asked for).
Result<HttpResponse> WithRetries(const RetryPolicy& policy, const std::string& what,
                                 const std::function<Result<HttpResponse>()>& attempt);

}  // namespace convgate::hub
