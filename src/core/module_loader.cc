#include "convgate/core/module_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "convgate/core/install_layout.h"
#include "convgate/version.h"

namespace convgate {
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

Result<void*> Open(const fs::path& path, const char* symbol, std::string_view kind) {
  // RTLD_LOCAL: the module's own copies of convgate's code and its SDK stay out of the global
  // namespace; RTLD_NOW: a missing symbol is an error here, not a crash in the middle of a run.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return Status::Unavailable("cannot load the " + std::string(kind) + " module " + path.string() +
                               ": " + ::dlerror());
  }
  void* entry = ::dlsym(handle, symbol);
  if (entry == nullptr) {
    return Status::Unavailable(path.string() + " is not a convgate " + std::string(kind) +
                               " module (no " + symbol + ")");
  }
  return entry;
}

}  // namespace

std::vector<fs::path> ModuleSearchPath() {
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
  const fs::path binary = RunningBinaryFolder();
  if (!binary.empty()) {
    folders.push_back(binary);
    folders.push_back((binary / ".." / "lib" / "convgate").lexically_normal());
  }
  // A program linking libconvgate.so: the modules installed beside the library.
  if (const fs::path code = CodeFolder(); !code.empty() && code != binary) {
    folders.push_back(code / "convgate");
  }
  folders.emplace_back(CONVGATE_PLUGIN_BUILD_DIR);
  return folders;
}

const char* ModuleBuildId() {
  static const std::string kId = std::string(kVersion) + " (" + kBuildCommit + ")";
  return kId.c_str();
}

Result<LoadedModule> LoadModule(std::string_view file, const char* symbol, std::string_view kind) {
  static std::mutex mutex;
  static std::map<std::string, LoadedModule, std::less<>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  // One entry per file and symbol: a module may export more than one entry point (the openvino
  // module's backend and IR writer); dlopen of a file already loaded returns the same handle.
  const std::string key = std::string(file) + '\n' + symbol;
  if (auto found = loaded.find(key); found != loaded.end()) return found->second;
  const std::vector<fs::path> folders = ModuleSearchPath();
  for (const fs::path& folder : folders) {
    const fs::path candidate = folder / file;
    std::error_code error;
    if (!fs::is_regular_file(candidate, error)) continue;
    CONVGATE_ASSIGN_OR_RETURN(void* entry, Open(candidate, symbol, kind));
    LoadedModule module{candidate, entry};
    loaded.emplace(key, module);
    return module;
  }
  return Status::NotFound("the " + std::string(kind) + " module " + std::string(file) +
                          " is not installed: looked in " + JoinPaths(folders) +
                          " (set CONVGATE_PLUGIN_PATH to the folder that holds it)");
}

Status CheckModuleBuild(const LoadedModule& module, std::string_view kind, int abi,
                        int expected_abi, const char* build) {
  if (abi == expected_abi && std::strcmp(build, ModuleBuildId()) == 0) return Status::OK();
  return Status::Unavailable("the " + std::string(kind) + " module " + module.path.string() +
                             " comes from convgate " + build + ", not from this build (" +
                             ModuleBuildId() + "): install the binary and its modules together");
}

}  // namespace convgate
