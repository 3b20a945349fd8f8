#include "backends/plugin_loader.h"

#include "convgate/core/module_loader.h"

namespace convgate::backends {

Result<const BackendPlugin*> LoadBackendPlugin(std::string_view file) {
  CONVGATE_ASSIGN_OR_RETURN(LoadedModule module,
                            LoadModule(file, "convgate_backend_plugin", "backend"));
  using Entry = const BackendPlugin* (*)();
  const BackendPlugin* plugin = reinterpret_cast<Entry>(module.entry)();
  CONVGATE_RETURN_IF_ERROR(
      CheckModuleBuild(module, "backend", plugin->abi, kBackendPluginAbi, plugin->build));
  return plugin;
}

}  // namespace convgate::backends
