#include "backends/plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

fs::path RunningBinaryFolder() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : exe.parent_path();
}

std::string JoinPaths(const std::vector<fs::path>& folders) {
  std::string joined;
  for (const fs::path& folder : folders) joined += (joined.empty() ? "" : ", ") + folder.string();
  return joined;
}

Result<const BackendPlugin*> Open(const fs::path& path) {
  // RTLD_LOCAL: the module's own copies of convgate's code and its SDK stay out of the global
  // namespace; RTLD_NOW: a missing symbol is an error here, not a crash in the middle of a run.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return Status::Unavailable("cannot load the backend module " + path.string() + ": " +
                               ::dlerror());
  }
  using Entry = const BackendPlugin* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, "convgate_backend_plugin"));
  if (entry == nullptr) {
    return Status::Unavailable(path.string() +
                               " is not a convgate backend module (no convgate_backend_plugin)");
  }
  const BackendPlugin* plugin = entry();
  if (plugin->abi != kBackendPluginAbi || std::strcmp(plugin->build, PluginBuildId()) != 0) {
    return Status::Unavailable("the backend module " + path.string() + " comes from convgate " +
                               plugin->build + ", not from this build (" + PluginBuildId() +
                               "): install the binary and its modules together");
  }
  return plugin;
}

}  // namespace

std::vector<fs::path> PluginSearchPath() {
  std::vector<fs::path> folders;
  if (const char* path = std::getenv("CONVGATE_PLUGIN_PATH"); path != nullptr) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      if (colon != 0) folders.emplace_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (const fs::path binary = RunningBinaryFolder(); !binary.empty()) {
    folders.push_back(binary);
    folders.push_back((binary / ".." / "lib" / "convgate").lexically_normal());
  }
  folders.emplace_back(CONVGATE_PLUGIN_BUILD_DIR);
  return folders;
}

Result<const BackendPlugin*> LoadBackendPlugin(std::string_view file) {
  static std::mutex mutex;
  static std::map<std::string, const BackendPlugin*, std::less<>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = loaded.find(file); found != loaded.end()) return found->second;
  const std::vector<fs::path> folders = PluginSearchPath();
  for (const fs::path& folder : folders) {
    const fs::path candidate = folder / file;
    std::error_code error;
    if (!fs::is_regular_file(candidate, error)) continue;
    CONVGATE_ASSIGN_OR_RETURN(const BackendPlugin* plugin, Open(candidate));
    loaded.emplace(std::string(file), plugin);
    return plugin;
  }
  return Status::NotFound("the backend module " + std::string(file) +
                          " is not installed: looked in " + JoinPaths(folders) +
                          " (set CONVGATE_PLUGIN_PATH to the folder that holds it)");
}

}  // namespace convgate::backends
