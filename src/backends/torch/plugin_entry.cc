// The entry point of libconvgate_backend_torch.so (backends/plugin.h).
#include "backends/plugin.h"
#include "backends/torch/torch_backend.h"

extern "C" const convgate::backends::BackendPlugin* convgate_backend_plugin() {
  static const convgate::backends::BackendPlugin kPlugin{convgate::backends::kBackendPluginAbi,
                                                         convgate::backends::PluginBuildId(),
                                                         &convgate::backends::CreateTorchBackend};
  return &kPlugin;
}
