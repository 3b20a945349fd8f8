#include "backends/onnxruntime/ort_backend.h"

#include "backends/onnxruntime/ort_env.h"
#include "backends/onnxruntime/ort_model.h"

namespace convgate::backends {
namespace {

class OrtBackend : public Backend, public DeferringBackend {
 public:
  std::string name() const override { return "ort"; }
  std::string version() const override { return OrtVersionString(); }
  bool SupportsIntermediates() const override { return true; }
  bool ReadsExternalData() const override { return true; }

  Result<std::unique_ptr<Model>> Load(const std::filesystem::path& model_path,
                                      const LoadOptions& options) override {
    CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<OrtModel> model, OrtModel::Load(model_path, options));
    return std::unique_ptr<Model>(std::move(model));
  }

  Result<std::unique_ptr<Model>> LoadDeferred(const std::filesystem::path& model_path,
                                              const LoadOptions& options) override {
    CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<OrtModel> model,
                              OrtModel::Load(model_path, options, /*defer_session=*/true));
    return std::unique_ptr<Model>(std::move(model));
  }
};

}  // namespace

std::unique_ptr<Backend> CreateOrtBackend() { return std::make_unique<OrtBackend>(); }

}  // namespace convgate::backends
