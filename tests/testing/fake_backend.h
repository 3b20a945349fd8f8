// A scripted backend for workflow tests (fakes over mocks, rule 6). A test scripts what
// loading a model path gives (a signature, or a load error) and what each sample's run returns
// (given tensors, NaNs, wrong shapes or dtypes, a run error, a delay), then hands the factory to a
// workflow through its options' backend_factory. No runtime and no model file's content is
// involved: the path only has to exist, since the workflows look at it before loading.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/backends/registry.h"
#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::testing {

// Tensors that copy by cloning (a TensorMap only moves), so that scripts can be written as braced
// lists, copied and reused.
class ScriptedTensors {
 public:
  ScriptedTensors() = default;
  ScriptedTensors(TensorMap tensors)
      : tensors_(std::move(tensors)) {}  // implicit: `.tensors = map`
  ScriptedTensors(const ScriptedTensors& other) : tensors_(other.tensors_.Clone()) {}
  ScriptedTensors& operator=(const ScriptedTensors& other) {
    tensors_ = other.tensors_.Clone();
    return *this;
  }
  ScriptedTensors(ScriptedTensors&&) = default;
  ScriptedTensors& operator=(ScriptedTensors&&) = default;

  const TensorMap& map() const { return tensors_; }
  TensorMap& map() { return tensors_; }

 private:
  TensorMap tensors_;
};

// What one sample's run of a fake model answers.
struct FakeRun {
  // The outputs, and any intermediate a per-node run may ask for by name. Run with no requested
  // names returns the declared outputs found here, in declaration order (one missing here is
  // missing from the result, as from a runtime that drops it), or all of them when the signature
  // declares none (positional_outputs); with requested names, exactly those (NotFound for one
  // not here).
  ScriptedTensors tensors;
  Status error = Status::OK();  // returned instead of the tensors when not OK
  // Slept before answering. A delay over the load options' limits.run_timeout_seconds (> 0)
  // sleeps only that long and fails with Unavailable "... timed out after ... (--run-timeout)",
  // as the ORT backend stops a run.
  double delay_seconds = 0.0;
};

// Shorthands for scripts: {Returns(outputs), Fails(Status::Unavailable("...")), ...}.
FakeRun Returns(TensorMap tensors);
FakeRun Fails(Status error);
FakeRun ReturnsAfter(double delay_seconds, TensorMap tensors);

// What loading one model path gives.
struct FakeModelScript {
  Signature signature;
  Status load_error = Status::OK();  // Load fails with it when not OK
  // runs[k] answers sample k. The fake tells samples apart by their inputs: the k-th distinct
  // inputs a model of this path is given are sample k (the workflows feed samples in order), and
  // a later run on the same inputs (per-node fetching intermediates chunk by chunk) answers as
  // sample k again. Samples past the end answer as the last one; no runs: every run returns no
  // tensors.
  std::vector<FakeRun> runs;
  std::string log;  // Model::last_log after each run
};

// One Backend::Load call, as the fake saw it.
struct FakeLoad {
  std::string backend;  // the name the factory was asked for
  std::filesystem::path path;
  backends::LoadOptions options;
};

// One Model::Run call.
struct FakeRunCall {
  std::filesystem::path path;
  int sample = 0;
  std::vector<std::string> requested;
};

// Creates fake backends under any name ("ort", "exec", ...): each loads the paths scripted here
// (NotFound for any other) and records what it was asked. Thread safe. Its backends and models
// share its state, so they may outlive it.
class FakeBackendFactory : public backends::BackendFactory {
 public:
  FakeBackendFactory();
  ~FakeBackendFactory() override;

  // Loading `path` (as given to the workflow) gives a model following `script`.
  void Script(const std::filesystem::path& path, FakeModelScript script);
  // What Backend::SupportsIntermediates answers (per-node validation needs it). Default true.
  void set_supports_intermediates(bool supports);

  Result<std::unique_ptr<backends::Backend>> Create(std::string_view name) override;

  std::vector<std::string> created() const;  // names asked of Create, in order
  std::vector<FakeLoad> loads() const;
  std::vector<FakeRunCall> runs() const;

  struct State;  // shared with the backends and models made; defined in fake_backend.cc

 private:
  std::shared_ptr<State> state_;
};

// A float32 tensor of `shape` holding `values` (as many as the shape has elements).
Tensor FloatTensor(std::vector<int64_t> shape, std::vector<float> values);

// A float32 output declared with fixed dims.
TensorInfo FloatInfo(std::string name, std::vector<int64_t> dims);

}  // namespace convgate::testing
