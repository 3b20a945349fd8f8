// WriteOrtOptimizedModel in a build without ONNX Runtime (CONVGATE_WITH_ONNXRUNTIME=OFF).
#include "convgate/backends/ort_optimize.h"

namespace convgate::backends {

Status WriteOrtOptimizedModel(const std::filesystem::path& source, const std::filesystem::path&,
                              OrtOptimizationLevel, const std::string&) {
  return Status::Unimplemented("cannot optimize " + source.string() +
                               " with ONNX Runtime: this convgate was built without it "
                               "(CONVGATE_WITH_ONNXRUNTIME=OFF)");
}

std::string OrtRuntimeVersion() { return ""; }

}  // namespace convgate::backends
