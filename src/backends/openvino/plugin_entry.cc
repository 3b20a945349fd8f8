// The entry points of libconvgate_backend_openvino.so: the backend (backends/plugin.h) and, in a
// build with OpenVINO's C++ runtime, the IR writer (convgate/backends/openvino_ir.h).
#include "backends/openvino/openvino_backend.h"
#include "backends/plugin.h"

extern "C" const convgate::backends::BackendPlugin* convgate_backend_plugin() {
  static const convgate::backends::BackendPlugin kPlugin{
      convgate::backends::kBackendPluginAbi, convgate::backends::PluginBuildId(),
      &convgate::backends::CreateOpenVinoBackend};
  return &kPlugin;
}

#if CONVGATE_OPENVINO_IN_PROCESS
#include "backends/openvino/ov_model.h"
#include "backends/openvino_ir_entry.h"

extern "C" const convgate::backends::OpenVinoIrEntry* convgate_openvino_ir() {
  static const convgate::backends::OpenVinoIrEntry kEntry{
      convgate::backends::kBackendPluginAbi, convgate::backends::PluginBuildId(),
      &convgate::backends::SaveOpenVinoIr, &convgate::backends::OpenVinoRuntimeVersion};
  return &kEntry;
}
#endif
