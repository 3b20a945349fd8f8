// HubOptionsFromEnvironment: the settings huggingface_hub reads, spelled as it spells them, so one
// environment configures both tools.
#include <cstdlib>
#include <string>

#include "convgate/core/file_util.h"
#include "convgate/core/numbers.h"
#include "convgate/hub/hub.h"

namespace convgate::hub {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxTokenFileBytes = 64 << 10;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// huggingface_hub's _is_true: "1", "ON", "YES", "TRUE", any case.
bool EnvTrue(const char* name) {
  std::string value = Env(name);
  for (char& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return value == "1" || value == "ON" || value == "YES" || value == "TRUE";
}

fs::path HfHome() {
  if (const std::string home = Env("HF_HOME"); !home.empty()) return home;
  if (const std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty())
    return fs::path(xdg) / "huggingface";
  return fs::path(Env("HOME")) / ".cache" / "huggingface";
}

// The first line of the token file, trimmed (huggingface_hub strips it the same way); "" when
// there is none. A token is a line: a FIFO, a device (/dev/zero reads to the memory limit) or a
// file over 64 KiB is refused, naming the file, before it is read.
Result<std::string> TokenFromFile(const fs::path& path, const char* setting) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return std::string();
  Result<std::string> text = ReadFile(path, kMaxTokenFileBytes, "a token file is one line");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return std::string();
    return text.status().WithContext(std::string("the hub token file (") + setting + ")");
  }
  const std::string token = text->substr(0, text->find('\n'));
  const size_t start = token.find_first_not_of(" \t\r\n");
  const size_t end = token.find_last_not_of(" \t\r\n");
  return start == std::string::npos ? "" : token.substr(start, end - start + 1);
}

// A number from `min` (0 or 1) to a day from `name`, when set.
Status ReadSeconds(const char* name, double min, double& target) {
  const std::string text = Env(name);
  if (text.empty()) return Status::OK();
  Result<double> value = ParseNumber(text, min, 86400);
  if (!value.ok()) {
    return Status::InvalidArgument(std::string(name) + "='" + text + "': expected a number from " +
                                   (min > 0 ? "1" : "0") + " to 86400");
  }
  target = *value;
  return Status::OK();
}

}  // namespace

Result<HubOptions> HubOptionsFromEnvironment(const std::string& token_flag) {
  HubOptions options;
  if (std::string endpoint = Env("HF_ENDPOINT"); !endpoint.empty()) {
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    if (!endpoint.starts_with("http://") && !endpoint.starts_with("https://")) {
      return Status::InvalidArgument("HF_ENDPOINT='" + endpoint +
                                     "': expected an http:// or https:// URL");
    }
    options.endpoint = endpoint;
  }
  options.token = token_flag;
  if (options.token.empty()) options.token = Env("HF_TOKEN");
  if (options.token.empty()) {
    const std::string token_path = Env("HF_TOKEN_PATH");
    CONVGATE_ASSIGN_OR_RETURN(
        options.token, TokenFromFile(token_path.empty() ? HfHome() / "token" : fs::path(token_path),
                                     token_path.empty() ? "HF_HOME/token" : "HF_TOKEN_PATH"));
  }
  const std::string hub_cache = Env("HF_HUB_CACHE");
  options.cache_dir = hub_cache.empty() ? HfHome() / "hub" : fs::path(hub_cache);
  options.offline = EnvTrue("HF_HUB_OFFLINE");
  double attempts = options.retry.attempts;
  CONVGATE_RETURN_IF_ERROR(ReadSeconds("CONVGATE_HUB_ATTEMPTS", 1, attempts));
  options.retry.attempts = static_cast<int>(attempts);
  CONVGATE_RETURN_IF_ERROR(
      ReadSeconds("CONVGATE_HUB_BACKOFF_BASE", 0, options.retry.backoff_base_seconds));
  CONVGATE_RETURN_IF_ERROR(
      ReadSeconds("CONVGATE_HUB_BACKOFF_MAX", 0, options.retry.backoff_max_seconds));
  CONVGATE_RETURN_IF_ERROR(
      ReadSeconds("CONVGATE_HUB_RETRY_AFTER_MAX", 0, options.retry.retry_after_max_seconds));
  CONVGATE_RETURN_IF_ERROR(
      ReadSeconds("CONVGATE_HUB_STALL_TIMEOUT", 1, options.retry.stall_timeout_seconds));
  return options;
}

}  // namespace convgate::hub
