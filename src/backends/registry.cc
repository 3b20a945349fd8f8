#include "convgate/backends/registry.h"

#include <algorithm>
#include <cctype>

#if CONVGATE_WITH_ONNXRUNTIME
#include "backends/onnxruntime/ort_backend.h"
#endif
#if CONVGATE_WITH_TORCH
#include "backends/torch/torch_backend.h"
#endif
#if CONVGATE_WITH_OPENCV
#include "backends/opencv/opencv_backend.h"
#endif
#include "backends/exec/exec_backend.h"

namespace convgate::backends {
namespace {

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
};

std::string JoinOrNone(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "(none)" : joined;
}

}  // namespace

std::vector<std::string> AvailableBackends() {
  std::vector<std::string> names;
#if CONVGATE_WITH_ONNXRUNTIME
  names.push_back("ort");
#endif
#if CONVGATE_WITH_TORCH
  names.push_back("torch");
#endif
#if CONVGATE_WITH_OPENCV
  names.push_back("opencv");
#endif
  names.push_back("exec");
  return names;
}

Result<std::unique_ptr<Backend>> CreateBackend(std::string_view name) {
#if CONVGATE_WITH_ONNXRUNTIME
  if (name == "ort") return CreateOrtBackend();
#endif
#if CONVGATE_WITH_TORCH
  if (name == "torch") return CreateTorchBackend();
#else
  if (name == "torch") {
    return Status::NotFound(
        "backend 'torch' (TorchScript) is not in this build: it needs libtorch-dev at configure "
        "time (CONVGATE_WITH_TORCH); this build has: " +
        JoinOrNone(AvailableBackends()));
  }
#endif
#if CONVGATE_WITH_OPENCV
  if (name == "opencv") return CreateOpenCvBackend();
#else
  if (name == "opencv") {
    return Status::NotFound(
        "backend 'opencv' (OpenCV DNN) is not in this build: it needs libopencv-dnn-dev at "
        "configure time (CONVGATE_WITH_OPENCV); this build has: " +
        JoinOrNone(AvailableBackends()));
  }
#endif
  if (name == "exec") return CreateExecBackend();
  return Status::NotFound("unknown backend '" + std::string(name) +
                          "'; this build has: " + JoinOrNone(AvailableBackends()));
}

Result<std::string> DefaultBackendFor(const std::filesystem::path& model_path) {
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

}  // namespace convgate::backends
