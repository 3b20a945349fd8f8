// The contract between convgate and libconvgate_store_postgres.so, the PostgreSQL store as a
// module loaded on first use (core/module_loader.h): libpqxx, libpq and the ~25 libraries they
// bring (Kerberos, LDAP, GnuTLS...) are mapped only by a command given a postgresql:// store.
#pragma once

#include <memory>

#include "convgate/store/store.h"

namespace convgate::store {

// Bumped whenever Store's interface, or anything passed through it, changes.
inline constexpr int kStorePluginAbi = 2;

struct StorePlugin {
  int abi;            // kStorePluginAbi of the module's build
  const char* build;  // ModuleBuildId() of the module's build
  Result<std::unique_ptr<Store>> (*open)(const StoreOptions& options);
};

}  // namespace convgate::store

// Defined by the module (postgres_plugin_entry.cc), the one symbol it exports.
extern "C" __attribute__((visibility("default"))) const convgate::store::StorePlugin*
convgate_store_plugin();
