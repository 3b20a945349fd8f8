#include "convgate/store/store.h"

#include <cstdlib>

#include "convgate/core/module_loader.h"
#include "convgate/core/numbers.h"
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

// The options with the call deadline of kStoreDeadlineEnv when it is set.
Result<StoreOptions> WithDeadlineFromEnvironment(StoreOptions options) {
  const char* seconds = std::getenv(kStoreDeadlineEnv);
  if (seconds == nullptr || *seconds == '\0') return options;
  Result<double> parsed = ParseNumber(seconds, 0.1, 86400.0);
  if (!parsed.ok()) {
    return Status::InvalidArgument(std::string(kStoreDeadlineEnv) + "=" + seconds + ": " +
                                   parsed.status().message());
  }
  options.call_deadline_ms = static_cast<int>(*parsed * 1000.0);
  return options;
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

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& given) {
  if (given.location.empty()) return Status::InvalidArgument("the store location is empty");
  CONVGATE_ASSIGN_OR_RETURN(const StoreOptions options, WithDeadlineFromEnvironment(given));
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
