#include "testing/fake_backend.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "backends/check_inputs.h"
#include "convgate/core/units.h"

namespace convgate::testing {

struct FakeBackendFactory::State {
  std::mutex mutex;
  std::map<std::filesystem::path, FakeModelScript> scripts;
  bool supports_intermediates = true;
  std::vector<std::string> created;
  std::vector<FakeLoad> loads;
  std::vector<FakeRunCall> runs;
};

namespace {

using State = FakeBackendFactory::State;

bool SameInputs(const TensorMap& a, const TensorMap& b) {
  if (a.Names() != b.Names()) return false;
  for (size_t idx = 0; idx < a.size(); ++idx) {
    if (!a[idx].tensor.BitwiseEquals(b[idx].tensor)) return false;
  }
  return true;
}

Result<TensorMap> Select(const TensorMap& tensors, const Signature& signature,
                         const std::vector<std::string>& requested,
                         const std::filesystem::path& path) {
  TensorMap selected;
  if (requested.empty()) {
    if (signature.positional_outputs) return tensors.Clone();
    for (const TensorInfo& info : signature.outputs) {
      if (const Tensor* tensor = tensors.Find(info.name)) {
        selected.InsertOrAssign(info.name, tensor->Clone());
      }
    }
    return selected;
  }
  CONVGATE_RETURN_IF_ERROR(backends::CheckNoRepeats(requested, path));
  for (const std::string& name : requested) {
    const Tensor* tensor = tensors.Find(name);
    if (tensor == nullptr) {
      return Status::NotFound(path.string() + ": the fake model has no tensor '" + name + "'");
    }
    selected.InsertOrAssign(name, tensor->Clone());
  }
  return selected;
}

class FakeModel : public backends::Model {
 public:
  FakeModel(std::shared_ptr<State> state, std::filesystem::path path, FakeModelScript script,
            backends::LoadOptions options)
      : state_(std::move(state)),
        path_(std::move(path)),
        script_(std::move(script)),
        options_(std::move(options)) {}

  const Signature& signature() const override { return script_.signature; }

  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override {
    CONVGATE_RETURN_IF_ERROR(backends::CheckDeclaredInputs(script_.signature, inputs, path_));
    const int sample = SampleOf(inputs);
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->runs.push_back({path_, sample, output_names});
    }
    log_ = script_.log;
    if (script_.runs.empty()) return TensorMap();
    const FakeRun& run = script_.runs[std::min<size_t>(sample, script_.runs.size() - 1)];
    const double timeout = options_.limits.run_timeout_seconds;
    if (timeout > 0 && run.delay_seconds > timeout) {
      std::this_thread::sleep_for(std::chrono::duration<double>(timeout));
      return Status::Unavailable(path_.string() + ": timed out after " + FormatDuration(timeout) +
                                 " (--run-timeout); the fake stopped the run");
    }
    if (run.delay_seconds > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(run.delay_seconds));
    }
    if (!run.error.ok()) return run.error;
    return Select(run.tensors.map(), script_.signature, output_names, path_);
  }

  std::string last_log() const override { return log_; }

 private:
  int SampleOf(const TensorMap& inputs) {
    for (size_t idx = 0; idx < seen_.size(); ++idx) {
      if (SameInputs(seen_[idx], inputs)) return static_cast<int>(idx);
    }
    seen_.push_back(inputs.Clone());
    return static_cast<int>(seen_.size() - 1);
  }

  std::shared_ptr<State> state_;
  std::filesystem::path path_;
  FakeModelScript script_;
  backends::LoadOptions options_;
  std::vector<TensorMap> seen_;  // the distinct inputs so far: index = sample
  std::string log_;
};

class FakeBackend : public backends::Backend {
 public:
  FakeBackend(std::shared_ptr<State> state, std::string name)
      : state_(std::move(state)), name_(std::move(name)) {}

  std::string name() const override { return name_; }
  std::string version() const override { return "fake-1"; }
  bool SupportsIntermediates() const override {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->supports_intermediates;
  }

  Result<std::unique_ptr<backends::Model>> Load(const std::filesystem::path& model_path,
                                                const backends::LoadOptions& options) override {
    FakeModelScript script;
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->loads.push_back({name_, model_path, options});
      auto found = state_->scripts.find(model_path);
      if (found == state_->scripts.end()) {
        return Status::NotFound(model_path.string() + ": no model is scripted at this path");
      }
      script = found->second;
    }
    if (!script.load_error.ok()) return script.load_error;
    return std::unique_ptr<backends::Model>(
        std::make_unique<FakeModel>(state_, model_path, std::move(script), options));
  }

 private:
  std::shared_ptr<State> state_;
  std::string name_;
};

}  // namespace

FakeBackendFactory::FakeBackendFactory() : state_(std::make_shared<State>()) {}
FakeBackendFactory::~FakeBackendFactory() = default;

void FakeBackendFactory::Script(const std::filesystem::path& path, FakeModelScript script) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->scripts[path] = std::move(script);
}

void FakeBackendFactory::set_supports_intermediates(bool supports) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->supports_intermediates = supports;
}

Result<std::unique_ptr<backends::Backend>> FakeBackendFactory::Create(std::string_view name) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->created.emplace_back(name);
  return std::unique_ptr<backends::Backend>(
      std::make_unique<FakeBackend>(state_, std::string(name)));
}

std::vector<std::string> FakeBackendFactory::created() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->created;
}

std::vector<FakeLoad> FakeBackendFactory::loads() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->loads;
}

std::vector<FakeRunCall> FakeBackendFactory::runs() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->runs;
}

FakeRun Returns(TensorMap tensors) {
  FakeRun run;
  run.tensors = std::move(tensors);
  return run;
}

FakeRun Fails(Status error) {
  FakeRun run;
  run.error = std::move(error);
  return run;
}

FakeRun ReturnsAfter(double delay_seconds, TensorMap tensors) {
  FakeRun run = Returns(std::move(tensors));
  run.delay_seconds = delay_seconds;
  return run;
}

Tensor FloatTensor(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::FromVector<float>(DType::kFloat32, Shape::Make(std::move(shape)).value(), values);
}

TensorInfo FloatInfo(std::string name, std::vector<int64_t> dims) {
  TensorInfo info;
  info.name = std::move(name);
  info.dtype = DType::kFloat32;
  info.type_name = "float32";
  info.has_shape = true;
  for (int64_t dim : dims) info.shape.push_back(Dim::Fixed(dim));
  return info;
}

}  // namespace convgate::testing
