#include "convgate/core/install_layout.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace convgate {

namespace fs = std::filesystem;

fs::path CodeFolder() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&CodeFolder), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  std::error_code error;
  const fs::path file = fs::canonical(info.dli_fname, error);
  return error ? fs::path() : file.parent_path();
}

fs::path RuntimeScript(std::string_view name, const char* override_variable) {
  if (override_variable != nullptr) {
    const char* value = std::getenv(override_variable);
    if (value != nullptr && value[0] != '\0') return value;
  }
  // The code is in PREFIX/bin (the binary), PREFIX/lib (libconvgate.so) or PREFIX/lib/convgate
  // (a module).
  if (const fs::path code = CodeFolder(); !code.empty()) {
    for (const fs::path& prefix : {code / "..", code / ".." / ".."}) {
      const fs::path installed =
          (prefix / "share" / "convgate" / "runtime" / std::string(name)).lexically_normal();
      std::error_code error;
      if (fs::is_regular_file(installed, error)) return installed;
    }
  }
  return fs::path(CONVGATE_RUNTIME_SOURCE_DIR) / std::string(name);
}

}  // namespace convgate
