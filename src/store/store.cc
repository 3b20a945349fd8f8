#include "convgate/store/store.h"

#include "convgate/core/module_loader.h"
#include "convgate/store/location.h"
#include "store/postgres_plugin.h"
#include "store/sqlite_store.h"

namespace convgate::store {
namespace {

Result<std::unique_ptr<Store>> OpenPostgres(const StoreOptions& options) {
  CONVGATE_ASSIGN_OR_RETURN(LoadedModule module, LoadModule("libconvgate_store_postgres.so",
                                                            "convgate_store_plugin", "store"));
  using Entry = const StorePlugin* (*)();
  const StorePlugin* plugin = reinterpret_cast<Entry>(module.entry)();
  CONVGATE_RETURN_IF_ERROR(
      CheckModuleBuild(module, "store", plugin->abi, kStorePluginAbi, plugin->build));
  return plugin->open(options);
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (options.location.empty()) return Status::InvalidArgument("the store location is empty");
  switch (StoreBackendOf(options.location)) {
    case StoreBackend::kPostgres:
      return OpenPostgres(options);
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
