#include "hub/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>

#include "hub/curl_on_demand.h"

namespace convgate::hub {
namespace {

// Redirects followed per request: the hub uses one (resolve -> CDN), renamed repositories two.
constexpr int kMaxRedirects = 10;
// Bytes of an error body kept for messages.
constexpr size_t kMaxErrorBody = 4096;

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};

struct Transfer {
  HttpResponse* response = nullptr;
  const BodySink* sink = nullptr;
  bool started = false;
  Status sink_status;
  // Stall detection (OnProgress): when bytes last moved, and whether the transfer was dropped.
  double stall_seconds = 30;
  curl_off_t last_bytes = -1;
  std::chrono::steady_clock::time_point last_change = std::chrono::steady_clock::now();
  bool stalled = false;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool past_deadline = false;
  // The response's header bytes: a server sending megabytes of headers is cut off.
  size_t header_bytes = 0;
  bool headers_too_large = false;
};

// Header bytes of one response taken at most; the hub sends a few KB.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

std::string Trim(std::string_view text) {
  size_t start = 0;
  size_t end = text.size();
  while (start < end && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  while (end > start && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(start, end - start));
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  transfer->header_bytes += line.size();
  if (transfer->header_bytes > kMaxHeaderBytes) {
    transfer->headers_too_large = true;
    return 0;  // curl ends the transfer
  }
  if (line.starts_with("HTTP/")) {
    // A new response (a 100 Continue before the real one): its headers replace the last ones'.
    transfer->response->headers.clear();
    const size_t space = line.find(' ');
    if (space != std::string_view::npos) {
      transfer->response->status =
          std::strtol(std::string(line.substr(space + 1, 3)).c_str(), nullptr, 10);
    }
    return line.size();
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return line.size();
  std::string name = Trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  transfer->response->headers[name] = Trim(line.substr(colon + 1));
  return line.size();
}

bool IsSuccess(long status) { return status >= 200 && status < 300; }

Status StartSink(Transfer& transfer) {
  if (transfer.started) return Status::OK();
  transfer.started = true;
  return transfer.sink->first ? transfer.sink->first(*transfer.response) : Status::OK();
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::string_view chunk(data, size * count);
  HttpResponse& response = *transfer->response;
  if (transfer->sink != nullptr && IsSuccess(response.status)) {
    transfer->sink_status = StartSink(*transfer);
    if (transfer->sink_status.ok()) transfer->sink_status = transfer->sink->write(chunk);
    if (!transfer->sink_status.ok()) return 0;  // libcurl aborts with CURLE_WRITE_ERROR
    response.body_bytes += chunk.size();
    return chunk.size();
  }
  const size_t room =
      IsSuccess(response.status) && transfer->sink == nullptr
          ? chunk.size()
          : std::min(chunk.size(), kMaxErrorBody - std::min(kMaxErrorBody, response.body.size()));
  response.body.append(chunk.substr(0, room));
  return chunk.size();
}

// libcurl's own low-speed limit averages the speed over its last ~6 s, so a body that stops after
// a burst is noticed seconds late; this drops a transfer once fewer than kMinBytesPerSecond x
// stall_seconds bytes have moved in stall_seconds (libcurl calls it about once a second while
// idle). A minimum rate, not only "a byte": a server trickling one byte a second would otherwise
// hold a fetch (and a batch's preflight) for ever.
constexpr double kMinBytesPerSecond = 1024;

int OnProgress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
               curl_off_t ulnow) {
  (void)dltotal;
  (void)ultotal;
  auto* transfer = static_cast<Transfer*>(user);
  const auto now = std::chrono::steady_clock::now();
  if (now >= transfer->deadline) {
    transfer->past_deadline = true;
    return 1;  // libcurl aborts with CURLE_ABORTED_BY_CALLBACK
  }
  const auto needed = static_cast<curl_off_t>(kMinBytesPerSecond * transfer->stall_seconds);
  if (transfer->last_bytes < 0 || dlnow + ulnow >= transfer->last_bytes + needed) {
    transfer->last_bytes = dlnow + ulnow;
    transfer->last_change = now;
    return 0;
  }
  if (std::chrono::duration<double>(now - transfer->last_change).count() >
      transfer->stall_seconds) {
    transfer->stalled = true;
    return 1;  // libcurl aborts with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

TransportError Classify(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportError::kConnect;
    case CURLE_OPERATION_TIMEDOUT:
      return TransportError::kTimeout;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
      return TransportError::kBrokenOff;
    default:
      return TransportError::kOther;
  }
}

std::unique_ptr<curl_slist, ListDeleter> RequestHeaders(const HttpRequest& request,
                                                        const std::string& url) {
  curl_slist* list = nullptr;
  // The hub's etags and sizes are of the stored bytes; a compressed transfer would not match them.
  list = curl_slist_append(list, "Accept-Encoding: identity");
  if (!request.token.empty() && !request.token_origin.empty() &&
      UrlOrigin(url) == request.token_origin) {
    list = curl_slist_append(list, ("Authorization: Bearer " + request.token).c_str());
  }
  if (request.range_start > 0) {
    list = curl_slist_append(list,
                             ("Range: bytes=" + std::to_string(request.range_start) + "-").c_str());
  }
  return std::unique_ptr<curl_slist, ListDeleter>(list);
}

// One hop: no redirect followed.
Status PerformHop(const HttpRequest& request, const std::string& url, const BodySink* sink,
                  HttpResponse& response) {
  std::unique_ptr<CURL, EasyDeleter> curl(curl_easy_init());
  if (!curl) {
    const std::string why = CurlLoadError();
    if (!why.empty()) return Status::Unavailable(why + " (libcurl, for downloads from the hub)");
    return Status::Internal("libcurl: curl_easy_init failed");
  }
  const auto headers = RequestHeaders(request, url);
  Transfer transfer{.response = &response,
                    .sink = sink,
                    .stall_seconds = std::max(0.1, request.stall_timeout_seconds),
                    .deadline = request.deadline};
  char error[CURL_ERROR_SIZE] = {0};
  const long stall = std::max(1L, static_cast<long>(request.stall_timeout_seconds + 0.5));
  CURL* handle = curl.get();
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(handle, CURLOPT_NOBODY, request.head ? 1L : 0L);
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(handle, CURLOPT_USERAGENT, "convgate");
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT, stall);
  curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(handle, CURLOPT_XFERINFODATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &transfer);
  const CURLcode code = curl_easy_perform(handle);
  if (!transfer.sink_status.ok()) return transfer.sink_status;
  if (code == CURLE_OK && sink != nullptr && IsSuccess(response.status)) {
    CONVGATE_RETURN_IF_ERROR(StartSink(transfer));  // an empty body still starts the sink
  }
  if (transfer.past_deadline) {
    response.transport = TransportError::kTimeout;
    response.transport_message = "cut off at the fetch's deadline";
  } else if (transfer.stalled) {
    response.transport = TransportError::kTimeout;
    response.transport_message = "less than " +
                                 std::to_string(static_cast<int>(kMinBytesPerSecond)) +
                                 " bytes a second received for " +
                                 std::to_string(static_cast<int>(transfer.stall_seconds)) + " s";
  } else if (transfer.headers_too_large) {
    response.transport = TransportError::kOther;
    response.transport_message = "the response's headers are over 1 MiB: not a hub's answer";
  } else if (code == CURLE_OUT_OF_MEMORY) {
    // What curl says, in its versions before 8.6, of one header line over its 100 KB limit.
    response.transport = TransportError::kOther;
    response.transport_message =
        "curl refused the response (\"out of memory\", which curl reports for a header line "
        "over its 100 KB limit): not a hub's answer";
  } else if (code != CURLE_OK) {
    response.transport = Classify(code);
    response.transport_message = error[0] != '\0' ? error : curl_easy_strerror(code);
  }
  return Status::OK();
}

}  // namespace

Result<HttpResponse> Perform(const HttpRequest& request, const BodySink* sink) {
  InitCurlOnce();
  std::string url = request.url;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    HttpResponse response;
    response.url = url;
    CONVGATE_RETURN_IF_ERROR(PerformHop(request, url, sink, response));
    const auto location = response.headers.find("location");
    const bool redirect = response.status >= 300 && response.status < 400 &&
                          location != response.headers.end() &&
                          response.transport == TransportError::kNone;
    if (!redirect) return response;
    CONVGATE_ASSIGN_OR_RETURN(std::string next, ResolveLocation(url, location->second));
    if (!request.follow_cross_origin && UrlOrigin(next) != UrlOrigin(url)) return response;
    url = std::move(next);
  }
  return Status::Unavailable("GET " + request.url + ": more than " + std::to_string(kMaxRedirects) +
                             " redirects");
}

Result<std::string> ResolveLocation(const std::string& base, const std::string& location) {
  std::unique_ptr<CURLU, UrlDeleter> handle(curl_url());
  if (!handle || curl_url_set(handle.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK ||
      curl_url_set(handle.get(), CURLUPART_URL, location.c_str(), 0) != CURLUE_OK) {
    return Status::InvalidArgument("redirect from " + base + " to '" + location + "': not a URL");
  }
  char* text = nullptr;
  if (curl_url_get(handle.get(), CURLUPART_URL, &text, 0) != CURLUE_OK) {
    return Status::InvalidArgument("redirect from " + base + " to '" + location + "': not a URL");
  }
  std::string resolved(text);
  curl_free(text);
  return resolved;
}

std::string UrlOrigin(std::string_view url) {
  InitCurlOnce();
  std::unique_ptr<CURLU, UrlDeleter> handle(curl_url());
  if (!handle ||
      curl_url_set(handle.get(), CURLUPART_URL, std::string(url).c_str(), 0) != CURLUE_OK) {
    return "";
  }
  std::string origin;
  for (CURLUPart part : {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT}) {
    char* text = nullptr;
    if (curl_url_get(handle.get(), part, &text, CURLU_DEFAULT_PORT) != CURLUE_OK) return "";
    origin += part == CURLUPART_SCHEME ? "" : (part == CURLUPART_HOST ? "://" : ":");
    origin += text;
    curl_free(text);
  }
  std::transform(origin.begin(), origin.end(), origin.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return origin;
}

}  // namespace convgate::hub
