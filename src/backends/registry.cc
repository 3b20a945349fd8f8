#include "convgate/backends/registry.h"

#include <algorithm>
#include <cctype>

#include "backends/exec/exec_protocol.h"

#if CONVGATE_WITH_ONNXRUNTIME
#include "backends/onnxruntime/ort_backend.h"
#endif
#include "backends/exec/exec_backend.h"
#include "backends/hf/hf_backend.h"
#include "backends/plugin_loader.h"
#include "backends/torch_export/torch_export_backend.h"

namespace convgate::backends {
namespace {

// What this build was configured with (src/backends/CMakeLists.txt).
#if CONVGATE_WITH_ONNXRUNTIME
constexpr bool kWithOnnxRuntime = true;
#else
constexpr bool kWithOnnxRuntime = false;
#endif
#if CONVGATE_WITH_TORCH
constexpr bool kWithTorch = true;
#else
constexpr bool kWithTorch = false;
#endif
#if CONVGATE_WITH_OPENCV
constexpr bool kWithOpenCv = true;
#else
constexpr bool kWithOpenCv = false;
#endif
#if CONVGATE_WITH_OPENVINO
constexpr bool kWithOpenVino = true;
#else
constexpr bool kWithOpenVino = false;
#endif

struct FormatEntry {
  std::string_view extension;  // lower case, with the dot
  std::string_view backend;
};

// Model file formats by extension and the backend that runs each by default. Listed whether or
// not the backend is built, so that a .pt in a build without libtorch says what is missing.
constexpr FormatEntry kFormats[] = {
    {".onnx", "ort"},
    // TorchScript archives (torch.jit.save); PyTorch users name them all three ways.
    {".pt", "torch"},
    {".pth", "torch"},
    {".torchscript", "torch"},
    // torch.export programs (torch.export.save), what current PyTorch writes.
    {".pt2", "torch-export"},
    // OpenVINO IR (weights in the .bin beside it).
    {".xml", "openvino"},
};

std::string JoinOrNone(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "(none)" : joined;
}

// The factories of the backends compiled into the binary itself.
std::unique_ptr<Backend> CreateBuiltIn(std::string_view name) {
#if CONVGATE_WITH_ONNXRUNTIME
  if (name == "ort") return CreateOrtBackend();
#endif
  if (name == "exec") return CreateExecBackend();
  if (name == "hf") return CreateHfBackend();
  if (name == "torch-export") return CreateTorchExportBackend();
  return nullptr;
}

std::vector<BackendInfo> MakeTable() {
  return {
      {"ort", "ONNX models (.onnx) on ONNX Runtime (CPU)", "", kWithOnnxRuntime,
       "CONVGATE_WITH_ONNXRUNTIME"},
      {"torch", "TorchScript (.pt, .pth, .torchscript) on libtorch", "libconvgate_backend_torch.so",
       kWithTorch, "CONVGATE_WITH_TORCH (needs libtorch-dev)"},
      {"opencv", "ONNX models on OpenCV DNN", "libconvgate_backend_opencv.so", kWithOpenCv,
       "CONVGATE_WITH_OPENCV (needs libopencv-dnn-dev)"},
      {"openvino",
       "OpenVINO IR (.xml + .bin) and ONNX models on OpenVINO's CPU plugin (the venv's openvino)",
       "libconvgate_backend_openvino.so", kWithOpenVino,
       "CONVGATE_WITH_OPENVINO (and ./scripts/setup.sh for the venv)"},
      {"torch-export", "torch.export programs (.pt2) on the venv's PyTorch (torch.export.load)", "",
       true, ""},
      {"exec", "any runtime as an external command (inputs.npz in, outputs.npz out)", "", true, ""},
      {"hf",
       "Hugging Face text-generation folders (config.json + weights: transformers on PyTorch, or "
       "an optimum-intel OpenVINO export), greedy generation in the project's venv",
       "", true, ""},
  };
}

}  // namespace

const std::vector<BackendInfo>& BackendTable() {
  static const std::vector<BackendInfo> kTable = MakeTable();
  return kTable;
}

std::vector<std::string> AvailableBackends() {
  std::vector<std::string> names;
  for (const BackendInfo& info : BackendTable()) {
    if (info.built) names.push_back(info.name);
  }
  return names;
}

Result<std::unique_ptr<Backend>> CreateBackend(std::string_view name) {
  const std::vector<BackendInfo>& table = BackendTable();
  auto info = std::find_if(table.begin(), table.end(),
                           [&](const BackendInfo& row) { return row.name == name; });
  if (info == table.end()) {
    return Status::NotFound("unknown backend '" + std::string(name) +
                            "'; this build has: " + JoinOrNone(AvailableBackends()));
  }
  if (!info->built) {
    return Status::NotFound("backend '" + info->name + "' (" + info->summary +
                            ") is not in this build: configure with " + info->build_option +
                            "; this build has: " + JoinOrNone(AvailableBackends()));
  }
  if (info->module.empty()) return CreateBuiltIn(name);
  CONVGATE_ASSIGN_OR_RETURN(const BackendPlugin* plugin, LoadBackendPlugin(info->module));
  return plugin->create();
}

BackendFactory* BackendFactory::Default() {
  // The registry itself: every name goes to CreateBackend.
  class Registry : public BackendFactory {
   public:
    Result<std::unique_ptr<Backend>> Create(std::string_view name) override {
      return CreateBackend(name);
    }
  };
  static Registry registry;
  return &registry;
}

Result<std::string> DefaultBackendFor(const std::filesystem::path& model_path) {
  if (IsHfModelFolder(model_path)) return std::string("hf");
  std::string extension = model_path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::vector<std::string> known;
  for (const FormatEntry& format : kFormats) {
    if (format.extension == extension) return std::string(format.backend);
    known.push_back(std::string(format.extension) + " (" + std::string(format.backend) + ")");
  }
  return Status::InvalidArgument("cannot tell the format of " + model_path.string() +
                                 " from its extension; known formats: " + JoinOrNone(known) +
                                 "; choose a backend explicitly");
}

Status CheckExecTemplate(const std::vector<std::string>& argv_template) {
  return CheckTemplate(argv_template);
}

}  // namespace convgate::backends
