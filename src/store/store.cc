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

std::string CanonicalParams(const std::map<std::string, std::string>& params) {
  std::string text;
  for (const auto& [name, value] : params) text += (text.empty() ? "" : ",") + name + "=" + value;
  return text;
}

std::string ConversionLabel(const JobRecord& job) {
  if (job.conversion_params.empty()) return job.conversion;
  return job.conversion + "{" + job.conversion_params + "}";
}

std::vector<std::string> SeriesKey(const JobRecord& job) {
  const bool given = job.conversion.rfind("target:", 0) == 0;
  return {job.entry_id, job.model_id, given ? "target:" : job.conversion, job.conversion_params};
}

bool SameConversion(const JobRecord& a, const JobRecord& b) {
  return SeriesKey(a) == SeriesKey(b) &&
         (a.converter_version.empty() || b.converter_version.empty() ||
          a.converter_version == b.converter_version);
}

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
