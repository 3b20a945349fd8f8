#include "convgate/backends/openvino_ir.h"

#include "backends/openvino_ir_entry.h"
#include "convgate/core/module_loader.h"

namespace convgate::backends {
namespace {

constexpr char kModule[] = "libconvgate_backend_openvino.so";

Result<const OpenVinoIrEntry*> LoadEntry() {
  if (!OpenVinoInProcess()) {
    return Status::Unimplemented(
        "this convgate was built without OpenVINO's C++ runtime (run ./scripts/setup.sh, then "
        "configure again)");
  }
  CONVGATE_ASSIGN_OR_RETURN(LoadedModule module,
                            LoadModule(kModule, "convgate_openvino_ir", "backend"));
  using Entry = const OpenVinoIrEntry* (*)();
  const OpenVinoIrEntry* entry = reinterpret_cast<Entry>(module.entry)();
  CONVGATE_RETURN_IF_ERROR(
      CheckModuleBuild(module, "backend", entry->abi, kBackendPluginAbi, entry->build));
  return entry;
}

}  // namespace

bool OpenVinoInProcess() {
#if CONVGATE_OPENVINO_IN_PROCESS
  return true;
#else
  return false;
#endif
}

Result<std::string> OpenVinoIrWriterVersion() {
  CONVGATE_ASSIGN_OR_RETURN(const OpenVinoIrEntry* entry, LoadEntry());
  return entry->version();
}

Status WriteOpenVinoIr(const std::filesystem::path& source, const std::filesystem::path& out_xml,
                       bool compress_to_fp16) {
  CONVGATE_ASSIGN_OR_RETURN(const OpenVinoIrEntry* entry, LoadEntry());
  return entry->save_ir(source, out_xml, compress_to_fp16);
}

}  // namespace convgate::backends
