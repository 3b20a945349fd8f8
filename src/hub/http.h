// One HTTP exchange over libcurl, with the redirects followed here rather than by libcurl so that
// the token goes only to the endpoint's origin: every hop decides for itself whether it gets the
// Authorization header.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate::hub {

// Response header names lower-cased; a repeated header keeps its last value.
using Headers = std::map<std::string, std::string>;

struct HttpRequest {
  bool head = false;  // HEAD instead of GET
  std::string url;
  // Sent as "Authorization: Bearer <token>" to URLs of `token_origin` (scheme://host[:port]) only.
  std::string token;
  std::string token_origin;
  uint64_t range_start = 0;  // > 0: "Range: bytes=<range_start>-"
  // Redirects to another origin are returned as the response (their Location is where the file
  // is) instead of followed: huggingface_hub's HEAD does the same to read the hub's headers.
  bool follow_cross_origin = true;
  double stall_timeout_seconds = 30;
  // RetryPolicy::deadline: the transfer is cut off then (a timeout whose message says so).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// How an exchange ended when no HTTP response arrived (or its body broke off).
enum class TransportError {
  kNone,
  kConnect,    // refused, unreachable, DNS
  kTimeout,    // connect timeout or a stalled transfer
  kBrokenOff,  // the connection dropped mid-response, a body shorter than its Content-Length
  kOther,      // anything else libcurl reports (TLS, a malformed response)
};

struct HttpResponse {
  long status = 0;
  Headers headers;
  std::string url;   // of the last hop
  std::string body;  // non-2xx bodies (first 4 KiB, for messages); 2xx with no sink
  TransportError transport = TransportError::kNone;
  std::string transport_message;  // libcurl's words, for kNone empty
  uint64_t body_bytes = 0;        // bytes handed to the sink
};

// Receives the body of a 2xx response in order; returning a non-OK Status aborts the transfer
// (the Status comes back from Perform). First is called once, before any bytes, with the status
// and headers (e.g. to truncate a file when a Range request gets a whole 200).
struct BodySink {
  std::function<Status(const HttpResponse& head)> first;
  std::function<Status(std::string_view chunk)> write;
};

// Performs the request. A transport failure is a response with `transport` set (the caller decides
// about retries); a non-OK Status only for what no retry can change (a bad URL, a sink error, too
// many redirects). `sink` may be null.
Result<HttpResponse> Perform(const HttpRequest& request, const BodySink* sink);

// "scheme://host[:port]" of an absolute URL, lower-cased (default ports spelled out, so
// https://h and https://h:443 are one origin); empty for anything else.
std::string UrlOrigin(std::string_view url);

// `location` (absolute, or relative to `base`) resolved against `base`. InvalidArgument when
// libcurl cannot make a URL of it.
Result<std::string> ResolveLocation(const std::string& base, const std::string& location);

}  // namespace convgate::hub
