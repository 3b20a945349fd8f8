#include "convgate/backends/registry.h"

#include <algorithm>
#include <cctype>

#if CONVGATE_WITH_ONNXRUNTIME
#include "backends/onnxruntime/ort_backend.h"
#endif

namespace convgate::backends {
namespace {

struct FormatEntry {
  std::string_view extension;  // lower case, with the dot
  std::string_view backend;
};

// Model file formats by extension and the backend that runs each by default.
constexpr FormatEntry kFormats[] = {
    {".onnx", "ort"},
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
  return names;
}

Result<std::unique_ptr<Backend>> CreateBackend(std::string_view name) {
#if CONVGATE_WITH_ONNXRUNTIME
  if (name == "ort") return CreateOrtBackend();
#endif
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
