// The entry point of libconvgate_backend_openvino.so (backends/plugin.h).
#include "backends/openvino/openvino_backend.h"
#include "backends/plugin.h"

extern "C" const convgate::backends::BackendPlugin* convgate_backend_plugin() {
  static const convgate::backends::BackendPlugin kPlugin{
      convgate::backends::kBackendPluginAbi, convgate::backends::PluginBuildId(),
      &convgate::backends::CreateOpenVinoBackend};
  return &kPlugin;
}
