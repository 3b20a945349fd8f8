// How a store location is spelled: which database it names, and how to print it without its
// password. Store::Open chooses the backend with StoreBackendOf; every message, summary and
// recorded command line that shows a location passes it through RedactStoreLocation first.
#pragma once

#include <string>

namespace convgate::store {

enum class StoreBackend {
  kSqlite,       // a file path or ":memory:"
  kPostgres,     // postgresql://... or postgres://..., or a libpq keyword string ("host=... ")
  kUnsupported,  // another URL scheme ("mysql://...")
};

// postgresql:// and postgres:// URLs, and libpq keyword/value strings that start with one of
// libpq's connection keywords followed by '=' ("host=/tmp dbname=convgate"), name PostgreSQL;
// any other "scheme://" is unsupported; everything else is an SQLite path.
StoreBackend StoreBackendOf(const std::string& location);

// The location with any password replaced by "***": the userinfo password of a URL
// (postgresql://user:secret@host/db), a password=... query parameter, and a password=... keyword.
// Locations without a password (and SQLite paths) come back unchanged.
std::string RedactStoreLocation(const std::string& location);

// One command-line argument with any store password redacted: a location given as its own
// argument, or the value of "--store=LOCATION". For recording a command line (runs.argv).
std::string RedactStoreArgument(const std::string& argument);

}  // namespace convgate::store
