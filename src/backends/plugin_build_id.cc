#include <string>

#include "backends/plugin.h"
#include "convgate/version.h"

namespace convgate::backends {

const char* PluginBuildId() {
  static const std::string kId = std::string(kVersion) + " (" + kBuildCommit + ")";
  return kId.c_str();
}

}  // namespace convgate::backends
