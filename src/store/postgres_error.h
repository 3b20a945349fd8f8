// libpqxx's exceptions as Status: nothing throws out of the store (docs/architecture.md rule 3).
#pragma once

#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate::store {

// Call inside a catch block only: rethrows the current exception and classifies it. Every
// failure is Unavailable naming the (already redacted) location and what was being done; a lock
// or statement timeout (SQLSTATE 55P03, 57014) says that another writer held the lock past the
// busy timeout, as SqliteStore says for SQLITE_BUSY.
Status CurrentPostgresError(const std::string& location, std::string_view what);

}  // namespace convgate::store
