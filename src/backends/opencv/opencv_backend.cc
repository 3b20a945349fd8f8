#include "backends/opencv/opencv_backend.h"

#include <opencv2/core/version.hpp>

#include "backends/opencv/opencv_model.h"

namespace convgate::backends {
namespace {

class OpenCvBackend : public Backend {
 public:
  std::string name() const override { return "opencv"; }
  std::string version() const override { return CV_VERSION; }
  bool SupportsIntermediates() const override { return true; }

  Result<std::unique_ptr<Model>> Load(const std::filesystem::path& model_path,
                                      const LoadOptions& options) override {
    CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<OpenCvModel> model,
                              OpenCvModel::Load(model_path, options));
    return std::unique_ptr<Model>(std::move(model));
  }
};

}  // namespace

std::unique_ptr<Backend> CreateOpenCvBackend() { return std::make_unique<OpenCvBackend>(); }

}  // namespace convgate::backends
