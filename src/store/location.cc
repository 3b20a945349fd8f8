#include "convgate/store/location.h"

#include <array>
#include <cctype>
#include <string_view>

namespace convgate::store {
namespace {

constexpr std::string_view kRedacted = "***";

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// libpq's keywords a connection string usually starts with (the libpq manual, "Parameter Key
// Words"); a path starting with one of these followed by '=' is not a plausible SQLite file.
bool IsKeywordString(std::string_view location) {
  constexpr std::array<std::string_view, 7> kKeywords = {
      "host=", "hostaddr=", "port=", "dbname=", "user=", "service=", "password="};
  size_t start = 0;
  while (start < location.size() && std::isspace(static_cast<unsigned char>(location[start]))) {
    ++start;
  }
  const std::string_view rest = location.substr(start);
  for (std::string_view keyword : kKeywords) {
    if (StartsWith(rest, keyword)) return true;
  }
  return false;
}

// Replaces the value of every "password=VALUE" (ended by any of `ends`) from `from` on.
std::string RedactPasswordParameters(std::string text, size_t from, std::string_view ends) {
  constexpr std::string_view kKey = "password=";
  size_t at = from;
  while ((at = text.find(kKey, at)) != std::string::npos) {
    const bool starts_word = at == from || ends.find(text[at - 1]) != std::string_view::npos ||
                             std::isspace(static_cast<unsigned char>(text[at - 1]));
    const size_t value = at + kKey.size();
    if (!starts_word) {
      at = value;
      continue;
    }
    size_t end = value;
    if (end < text.size() && text[end] == '\'') {
      // A quoted keyword value: up to the closing quote, backslash escapes included.
      for (++end; end < text.size() && text[end] != '\''; ++end) {
        if (text[end] == '\\') ++end;
      }
      end = std::min(end + 1, text.size());
    } else {
      while (end < text.size() && ends.find(text[end]) == std::string_view::npos &&
             !std::isspace(static_cast<unsigned char>(text[end]))) {
        ++end;
      }
    }
    text.replace(value, end - value, kRedacted);
    at = value + kRedacted.size();
  }
  return text;
}

std::string RedactUrl(std::string url) {
  const size_t authority = url.find("://") + 3;
  const size_t authority_end = url.find_first_of("/?", authority);
  const size_t limit = authority_end == std::string::npos ? url.size() : authority_end;
  // The last '@' of the authority ends the userinfo, so an unencoded '@' in a password stays
  // inside what is redacted.
  const size_t at = url.rfind('@', limit == 0 ? 0 : limit - 1);
  if (at != std::string::npos && at >= authority) {
    const size_t colon = url.find(':', authority);
    if (colon != std::string::npos && colon < at) {
      url.replace(colon + 1, at - colon - 1, kRedacted);
    }
  }
  const size_t query = url.find('?', authority);
  if (query == std::string::npos) return url;
  return RedactPasswordParameters(std::move(url), query + 1, "&");
}

}  // namespace

StoreBackend StoreBackendOf(const std::string& location) {
  if (StartsWith(location, "postgresql://") || StartsWith(location, "postgres://")) {
    return StoreBackend::kPostgres;
  }
  if (location.find("://") != std::string::npos) return StoreBackend::kUnsupported;
  if (IsKeywordString(location)) return StoreBackend::kPostgres;
  return StoreBackend::kSqlite;
}

std::string RedactStoreLocation(const std::string& location) {
  if (StoreBackendOf(location) != StoreBackend::kPostgres) return location;
  if (location.find("://") != std::string::npos) return RedactUrl(location);
  return RedactPasswordParameters(location, 0, "");
}

std::string RedactStoreArgument(const std::string& argument) {
  constexpr std::string_view kFlag = "--store=";
  if (StartsWith(argument, kFlag)) {
    return std::string(kFlag) + RedactStoreLocation(argument.substr(kFlag.size()));
  }
  return RedactStoreLocation(argument);
}

}  // namespace convgate::store
