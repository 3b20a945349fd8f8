#include "convgate/store/store.h"

#include "store/sqlite_store.h"

namespace convgate::store {

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (options.location.empty()) return Status::InvalidArgument("the store location is empty");
  // A URL scheme names another database; only SQLite (a path) is built in so far.
  if (options.location.find("://") != std::string::npos) {
    return Status::Unimplemented("store " + options.location +
                                 ": only SQLite files are supported (no database URLs yet)");
  }
  return SqliteStore::Open(options);
}

}  // namespace convgate::store
