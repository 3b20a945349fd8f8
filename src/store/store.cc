#include "convgate/store/store.h"

#include "convgate/store/location.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

namespace convgate::store {

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (options.location.empty()) return Status::InvalidArgument("the store location is empty");
  switch (StoreBackendOf(options.location)) {
    case StoreBackend::kPostgres:
      return PostgresStore::Open(options);
    case StoreBackend::kUnsupported:
      return Status::Unimplemented("store " + RedactStoreLocation(options.location) +
                                   ": unsupported URL scheme (an SQLite file path, or a "
                                   "postgresql:// or postgres:// URL)");
    case StoreBackend::kSqlite:
      break;
  }
  return SqliteStore::Open(options);
}

}  // namespace convgate::store
