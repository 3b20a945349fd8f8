// The entry point of libconvgate_store_postgres.so (store/postgres_plugin.h).
#include "convgate/core/module_loader.h"
#include "store/postgres_plugin.h"
#include "store/postgres_store.h"

extern "C" const convgate::store::StorePlugin* convgate_store_plugin() {
  static const convgate::store::StorePlugin kPlugin{convgate::store::kStorePluginAbi,
                                                    convgate::ModuleBuildId(),
                                                    &convgate::store::PostgresStore::Open};
  return &kPlugin;
}
