#include "convgate/store/location.h"

#include <array>
#include <cctype>
#include <string_view>

#include "convgate/core/redact.h"

namespace convgate::store {
namespace {

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
  return RedactPasswords(location);
}

std::string RedactStoreArgument(const std::string& argument) {
  constexpr std::string_view kFlag = "--store=";
  if (StartsWith(argument, kFlag)) {
    return std::string(kFlag) + RedactStoreLocation(argument.substr(kFlag.size()));
  }
  return RedactStoreLocation(argument);
}

}  // namespace convgate::store
