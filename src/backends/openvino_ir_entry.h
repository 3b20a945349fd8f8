// The second entry point of the openvino backend module (in a build with OpenVINO's C++ runtime):
// the IR writer behind convgate/backends/openvino_ir.h. Same build rule as backends/plugin.h.
#pragma once

#include <filesystem>
#include <string>

#include "backends/plugin.h"

namespace convgate::backends {

struct OpenVinoIrEntry {
  int abi;            // kBackendPluginAbi of the module's build
  const char* build;  // PluginBuildId() of the module's build
  Status (*save_ir)(const std::filesystem::path& source, const std::filesystem::path& out_xml,
                    bool compress_to_fp16);
  std::string (*version)();
};

}  // namespace convgate::backends

extern "C" __attribute__((visibility("default"))) const convgate::backends::OpenVinoIrEntry*
convgate_openvino_ir();
