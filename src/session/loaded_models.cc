#include "convgate/session/loaded_models.h"

#include "convgate/backends/releasable.h"

namespace convgate::session {
namespace {

namespace fs = std::filesystem;

// A kept Model handed out again; the LoadedModels owns it with every proxy.
class SharedModel : public backends::Model {
 public:
  explicit SharedModel(std::shared_ptr<backends::Model> model) : model_(std::move(model)) {}

  const Signature& signature() const override { return model_->signature(); }
  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override {
    return model_->Run(inputs, output_names);
  }
  std::string last_log() const override { return model_->last_log(); }
  std::string settings() const override { return model_->settings(); }
  bool concurrent_runs() const override { return model_->concurrent_runs(); }

 private:
  std::shared_ptr<backends::Model> model_;
};

// Everything in LoadOptions that can change what a load gives.
std::string LoadKey(const std::string& backend, const fs::path& path,
                    const backends::LoadOptions& options) {
  std::string key =
      backend + '\n' + fs::absolute(path).lexically_normal().string() + '\n' +
      std::to_string(options.intra_op_threads) + ' ' + std::to_string(options.inter_op_threads) +
      ' ' + std::to_string(options.streams) + ' ' +
      backends::GraphOptimizationName(options.graph_optimization) + ' ' +
      std::to_string(options.new_tokens) + ' ' + (options.present_key_values ? "kv " : "") +
      std::to_string(options.timeout_seconds) + ' ' +
      std::to_string(options.limits.run_timeout_seconds) + ' ' +
      std::to_string(options.limits.max_tensor_bytes) + ' ' +
      std::to_string(options.limits.max_run_bytes);
  for (const std::string& arg : options.exec_argv) key += '\n' + arg;
  return key;
}

class ReusingBackend : public backends::Backend {
 public:
  ReusingBackend(std::unique_ptr<backends::Backend> inner, LoadedModels* models)
      : inner_(std::move(inner)), models_(models) {}

  std::string name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  bool SupportsIntermediates() const override { return inner_->SupportsIntermediates(); }
  bool ReadsExternalData() const override { return inner_->ReadsExternalData(); }

  Result<std::unique_ptr<backends::Model>> Load(const fs::path& model_path,
                                                const backends::LoadOptions& options) override {
    const std::string key = LoadKey(inner_->name(), model_path, options);
    std::shared_ptr<backends::Model> model = models_->Find(key);
    if (!model) {
      CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<backends::Model> loaded,
                                inner_->Load(model_path, options));
      model = std::move(loaded);
      models_->Keep(key, model);
    }
    return std::unique_ptr<backends::Model>(new SharedModel(std::move(model)));
  }

 private:
  std::unique_ptr<backends::Backend> inner_;
  LoadedModels* models_;
};

}  // namespace

Result<std::unique_ptr<backends::Backend>> LoadedModels::Create(std::string_view name) {
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<backends::Backend> backend, inner_->Create(name));
  if (dynamic_cast<backends::DeferringBackend*>(backend.get()) != nullptr) return backend;
  return std::unique_ptr<backends::Backend>(new ReusingBackend(std::move(backend), this));
}

std::shared_ptr<backends::Model> LoadedModels::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = models_.find(key);
  return found == models_.end() ? nullptr : found->second;
}

void LoadedModels::Keep(const std::string& key, std::shared_ptr<backends::Model> model) {
  std::lock_guard<std::mutex> lock(mutex_);
  models_.emplace(key, std::move(model));
}

}  // namespace convgate::session
