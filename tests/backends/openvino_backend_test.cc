// The "openvino" backend through the registry (its module), on the example models and IR made
// from them, against ONNX Runtime; its runner's failures through fake runners written here; its
// protocol parsing without Python. Every test but the protocol's skips, saying why, when the venv
// (CONVGATE_VENV, scripts/setup.sh) has no openvino.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>

#include "backends/runner/runner_protocol.h"
#include "convgate/backends/openvino_ir.h"
#include "convgate/backends/registry.h"
#include "convgate/core/python_env.h"
#include "convgate/core/subprocess.h"
#include "graph/onnx_test_util.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(CONVGATE_BINARY_DIR) / "examples";
const std::string kRealRunner = std::string(CONVGATE_SOURCE_DIR) + "/runtime/openvino_runner.py";

bool Contains(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

// Why the venv cannot run OpenVINO, or "" when it can (asked once: importing takes ~1 s).
const std::string& OpenVinoMissing() {
  static const std::string kWhy = [] {
    Result<fs::path> python = VenvPython();
    if (!python.ok()) return python.status().message();
    SubprocessOptions options;
    options.timeout_seconds = 120;
    Result<SubprocessResult> run =
        RunSubprocess({python->string(), "-c", "import openvino"}, options);
    if (!run.ok()) return run.status().message();
    if (!run->succeeded()) return python->string() + " cannot import openvino";
    return std::string();
  }();
  return kWhy;
}

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

Tensor Image(int64_t batch, float offset) {
  std::vector<float> values(static_cast<size_t>(batch * 3 * 16 * 16));
  for (size_t idx = 0; idx < values.size(); ++idx) {
    values[idx] = std::sin(0.37f * static_cast<float>(idx) + offset);
  }
  return Tensor::FromVector(DType::kFloat32, Shape::Of({batch, 3, 16, 16}), values);
}

TensorMap ImageSample(int64_t batch, float offset = 0.0f) {
  TensorMap sample;
  EXPECT_TRUE(sample.Insert("image", Image(batch, offset)).ok());
  return sample;
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0;
  for (int64_t idx = 0; idx < a.shape().NumElements(); ++idx) {
    worst = std::max(worst, std::abs(a.GetDouble(idx) - b.GetDouble(idx)));
  }
  return worst;
}

class OpenVinoTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !CONVGATE_WITH_OPENVINO
    GTEST_SKIP() << "built without the OpenVINO backend (CONVGATE_WITH_OPENVINO=OFF)";
#endif
    if (!OpenVinoMissing().empty()) GTEST_SKIP() << OpenVinoMissing();
    Result<std::unique_ptr<Backend>> backend = CreateBackend("openvino");
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
  }

  Result<std::unique_ptr<Model>> Load(const fs::path& path, LoadOptions options = {}) {
    options.intra_op_threads = 1;
    return backend_->Load(path, options);
  }

  std::unique_ptr<Model> LoadOk(const fs::path& path, LoadOptions options = {}) {
    Result<std::unique_ptr<Model>> model = Load(path, options);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return model.ok() ? std::move(model).value() : nullptr;
  }

  // What ONNX Runtime computes for the same sample.
  static TensorMap OrtOutputs(const fs::path& path, const TensorMap& sample,
                              const std::vector<std::string>& names = {}) {
    Result<std::unique_ptr<Backend>> ort = CreateBackend("ort");
    if (!ort.ok()) return {};
    Result<std::unique_ptr<Model>> model = (*ort)->Load(path, LoadOptions{.intra_op_threads = 1});
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    Result<TensorMap> outputs = (*model)->Run(sample, names);
    EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
    return outputs.ok() ? std::move(outputs).value() : TensorMap();
  }

  // A Python runner script written here and run by the venv's python in place of the real one.
  fs::path WriteRunner(const std::string& name, const std::string& code) {
    const fs::path path = dir_.path() / name;
    std::ofstream(path) << code;
    return path;
  }

  // tinycnn as OpenVINO IR (f32 weights), converted by the venv's OpenVINO.
  fs::path TinyCnnIr() {
    const fs::path xml = dir_.path() / "tinycnn.xml";
    const std::string code = "import openvino as ov, sys\nov.save_model(ov.Core().read_model(" +
                             std::string("sys.argv[1]), sys.argv[2], compress_to_fp16=False)\n");
    SubprocessOptions options;
    options.timeout_seconds = 120;
    Result<SubprocessResult> run = RunSubprocess(
        {VenvPython()->string(), "-c", code, (kModels / "tinycnn.onnx").string(), xml.string()},
        options);
    EXPECT_TRUE(run.ok() && run->succeeded()) << (run.ok() ? run->stderr_tail : "");
    return xml;
  }

  testing::ScopedTempDir dir_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(OpenVinoTest, OnnxSignatureIsOpenVinosViewWithDynamicDimsUnknown) {
  std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx");
  ASSERT_NE(model, nullptr);
  const Signature& signature = model->signature();
  ASSERT_EQ(signature.inputs.size(), 1u);
  EXPECT_EQ(signature.inputs[0].name, "image");
  EXPECT_EQ(signature.inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(FormatDims(signature.inputs[0]), "[?, 3, 16, 16]");
  ASSERT_EQ(signature.outputs.size(), 2u);
  EXPECT_EQ(signature.outputs[0].name, "logits");
  EXPECT_EQ(signature.outputs[1].name, "probs");
  EXPECT_EQ(FormatDims(signature.outputs[1]), "[?, 10]");
  EXPECT_EQ(model->settings(), "CPU, inference precision f32");
  EXPECT_EQ(backend_->version().substr(0, 7), "2026.4.");
}

// One runner serves every sample, whatever its batch (the dynamic dim is bound by the input).
TEST_F(OpenVinoTest, RunsSamplesOfAnyBatchLikeOnnxRuntime) {
  std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx");
  ASSERT_NE(model, nullptr);
  for (int64_t batch : {1, 3, 2}) {
    const TensorMap sample = ImageSample(batch, static_cast<float>(batch));
    Result<TensorMap> outputs = model->Run(sample, {});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ(outputs->Names(), (std::vector<std::string>{"logits", "probs"}));
    const TensorMap expected = OrtOutputs(kModels / "tinycnn.onnx", sample);
    if (expected.empty()) continue;  // built without ONNX Runtime
    EXPECT_LT(MaxAbsDiff(*outputs->Find("logits"), *expected.Find("logits")), 1e-4);
    EXPECT_LT(MaxAbsDiff(*outputs->Find("probs"), *expected.Find("probs")), 1e-5);
  }
  Result<TensorMap> probs = model->Run(ImageSample(1), {"probs"});
  ASSERT_TRUE(probs.ok()) << probs.status().ToString();
  EXPECT_EQ(probs->Names(), std::vector<std::string>{"probs"});
}

TEST_F(OpenVinoTest, IrLoadsByDefaultAndComputesWhatTheOnnxModelDoes) {
  Result<std::string> backend = DefaultBackendFor("dir/model.XML");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ(*backend, "openvino");
  EXPECT_EQ(*DefaultBackendFor("model.onnx"), "ort");
  const fs::path xml = TinyCnnIr();
  std::unique_ptr<Model> ir = LoadOk(xml);
  std::unique_ptr<Model> onnx = LoadOk(kModels / "tinycnn.onnx");
  ASSERT_TRUE(ir && onnx);
  EXPECT_EQ(ir->signature().outputs.size(), 2u);
  const TensorMap sample = ImageSample(2);
  Result<TensorMap> from_ir = ir->Run(sample, {"logits"});
  Result<TensorMap> from_onnx = onnx->Run(sample, {"logits"});
  ASSERT_TRUE(from_ir.ok() && from_onnx.ok()) << from_ir.status().ToString();
  EXPECT_LT(MaxAbsDiff(*from_ir->Find("logits"), *from_onnx->Find("logits")), 1e-5);
}

TEST_F(OpenVinoTest, IntermediateTensorsComeFromAddOutputs) {
  ASSERT_TRUE(backend_->SupportsIntermediates());
  std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx");
  ASSERT_NE(model, nullptr);
  const TensorMap sample = ImageSample(2);
  const std::vector<std::string> names = {"relu", "logits", "conv"};
  Result<TensorMap> fetched = model->Run(sample, names);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched->Names(), names);
  EXPECT_EQ(fetched->Find("relu")->shape(), Shape::Of({2, 8, 16, 16}));
  const TensorMap expected = OrtOutputs(kModels / "tinycnn.onnx", sample, names);
  if (!expected.empty()) {
    EXPECT_LT(MaxAbsDiff(*fetched->Find("relu"), *expected.Find("relu")), 1e-4);
    EXPECT_LT(MaxAbsDiff(*fetched->Find("conv"), *expected.Find("conv")), 1e-4);
  }
  // The declared outputs again, then an unknown name: NotFound naming it, and the runner lives on.
  ASSERT_TRUE(model->Run(sample, {}).ok());
  Result<TensorMap> unknown = model->Run(sample, {"relu", "no_such_tensor"});
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound) << unknown.status().ToString();
  EXPECT_TRUE(Contains(unknown.status(), "no_such_tensor")) << unknown.status().ToString();
  EXPECT_TRUE(model->Run(sample, {"relu"}).ok());
  Result<TensorMap> repeated = model->Run(sample, {"relu", "relu"});
  EXPECT_EQ(repeated.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(OpenVinoTest, MissingAndUnreadableFilesAreNamed) {
  Result<std::unique_ptr<Model>> missing = Load(dir_.path() / "nope.onnx");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status(), "nope.onnx"));
  const fs::path xml = TinyCnnIr();
  fs::path bin = xml;
  bin.replace_extension(".bin");
  fs::remove(bin);
  Result<std::unique_ptr<Model>> no_weights = Load(xml);
  EXPECT_EQ(no_weights.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(no_weights.status(), bin.string())) << no_weights.status().ToString();
  const fs::path garbage = dir_.path() / "garbage.onnx";
  std::ofstream(garbage) << "this is not a model";
  Result<std::unique_ptr<Model>> unreadable = Load(garbage);
  EXPECT_EQ(unreadable.status().code(), StatusCode::kDataLoss) << unreadable.status().ToString();
  EXPECT_TRUE(Contains(unreadable.status(), garbage.string()));
  EXPECT_TRUE(Contains(unreadable.status(), "OpenVINO cannot read the model"));
  // OpenVINO would block reading a FIFO until the load timeout: refused up front.
  const fs::path fifo = dir_.path() / "fifo.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<std::unique_ptr<Model>> from_fifo = Load(fifo);
  EXPECT_FALSE(from_fifo.ok());
  EXPECT_TRUE(Contains(from_fifo.status(), fifo.string())) << from_fifo.status().ToString();
}

TEST_F(OpenVinoTest, WrongInputsAreRefusedBeforeTheRunner) {
  std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx");
  ASSERT_NE(model, nullptr);
  TensorMap wrong;
  ASSERT_TRUE(wrong
                  .Insert("image", Tensor::FromVector(DType::kFloat32, Shape::Of({1, 3, 8}),
                                                      std::vector<float>(24, 0.0f)))
                  .ok());
  Result<TensorMap> run = model->Run(wrong, {});
  EXPECT_EQ(run.status().code(), StatusCode::kFailedPrecondition) << run.status().ToString();
}

TEST_F(OpenVinoTest, TheRunnerWithNoVenvOrNoOpenVinoSaysToRunSetup) {
  ScopedEnv runner("CONVGATE_OPENVINO_RUNNER", kRealRunner);
  {
    ScopedEnv venv("CONVGATE_VENV", (dir_.path() / "no-venv").string());
    Result<std::unique_ptr<Model>> model = Load(kModels / "tinycnn.onnx");
    EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
    EXPECT_TRUE(Contains(model.status(), "run ./scripts/setup.sh")) << model.status().ToString();
  }
  // A venv whose python lacks openvino: Debian's.
  fs::create_directories(dir_.path() / "bare" / "bin");
  fs::create_symlink("/usr/bin/python3", dir_.path() / "bare" / "bin" / "python");
  ScopedEnv venv("CONVGATE_VENV", (dir_.path() / "bare").string());
  Result<std::unique_ptr<Model>> model = Load(kModels / "tinycnn.onnx");
  EXPECT_EQ(model.status().code(), StatusCode::kFailedPrecondition) << model.status().ToString();
  EXPECT_TRUE(Contains(model.status(), "cannot import openvino")) << model.status().ToString();
  EXPECT_TRUE(Contains(model.status(), "./scripts/setup.sh"));
}

#if CONVGATE_OPENVINO_IN_PROCESS
// In-process, a load needs no Python: with no venv at all the model loads and computes what the
// runner process computes from the same OpenVINO build.
TEST_F(OpenVinoTest, InProcessNeedsNoPythonAndComputesWhatTheRunnerDoes) {
  const TensorMap sample = ImageSample(2);
  Result<TensorMap> in_process = Status::Internal("not run");
  {
    ScopedEnv venv("CONVGATE_VENV", (dir_.path() / "no-venv").string());
    std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx");
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(model->settings(), "CPU, inference precision f32");
    in_process = model->Run(sample, {});
    ASSERT_TRUE(in_process.ok()) << in_process.status().ToString();
  }
  ScopedEnv runner("CONVGATE_OPENVINO_RUNNER", kRealRunner);
  std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->signature().outputs.size(), 2u);
  Result<TensorMap> through_runner = model->Run(sample, {});
  ASSERT_TRUE(through_runner.ok()) << through_runner.status().ToString();
  ASSERT_EQ(in_process->Names(), through_runner->Names());
  for (const std::string& name : in_process->Names()) {
    EXPECT_LT(MaxAbsDiff(*in_process->Find(name), *through_runner->Find(name)), 1e-6) << name;
  }
}

// A Run past the run timeout is cancelled, said so, and the model serves the next Run: 48
// 1024x1024 MatMuls of the input by itself (~100 GFLOP) against 0.2 s. Twelve (~26 GFLOP) once
// finished inside 0.2 s on an idle machine, where OpenVINO's CPU plugin runs them on every core.
TEST_F(OpenVinoTest, InProcessRunPastTheRunTimeoutIsCancelled) {
  std::string nodes;
  std::string last = "x";
  constexpr int kMatMuls = 48;
  for (int i = 0; i < kMatMuls; ++i) {
    const std::string next = i == kMatMuls - 1 ? "y" : "m" + std::to_string(i);
    nodes += "  " + next + " = MatMul(" + last + ", x)\n";
    last = next;
  }
  const fs::path path = dir_.path() / "slow.onnx";
  testing::WriteModel(
      testing::ParseOnnxText("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                             "slow (float[1024, 1024] x) => (float[1024, 1024] y) {\n" +
                             nodes + "}\n"),
      path);
  LoadOptions options;
  options.limits.run_timeout_seconds = 0.2;
  std::unique_ptr<Model> model = LoadOk(path, options);
  ASSERT_NE(model, nullptr);
  TensorMap sample;
  ASSERT_TRUE(sample
                  .Insert("x", Tensor::FromVector(DType::kFloat32, Shape::Of({1024, 1024}),
                                                  std::vector<float>(1024 * 1024, 0.001f)))
                  .ok());
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    Result<TensorMap> run = model->Run(sample, {});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(run.status().code(), StatusCode::kUnavailable) << run.status().ToString();
    EXPECT_TRUE(Contains(run.status(), "did not finish within 0.2 s and was cancelled"))
        << run.status().ToString();
    EXPECT_TRUE(Contains(run.status(), path.string())) << run.status().ToString();
    // Cancelled between nodes: one MatMul (~0.2-0.5 s here) at most after the limit.
    EXPECT_LT(seconds, 30.0);
  }
}
#endif

#if CONVGATE_OPENVINO_IN_PROCESS
// ONNX -> IR in-process (what `convert --to openvino` uses): the IR computes what the ONNX model
// does, fp16 compression halves the weights, and bad sources are named.
TEST_F(OpenVinoTest, TheIrWriterConvertsInProcess) {
  ASSERT_TRUE(OpenVinoInProcess());
  Result<std::string> version = OpenVinoIrWriterVersion();
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, backend_->version());
  const fs::path xml = dir_.path() / "out" / "tinycnn.xml";
  fs::create_directories(xml.parent_path());
  ASSERT_TRUE(WriteOpenVinoIr(kModels / "tinycnn.onnx", xml, false).ok());
  const fs::path half = dir_.path() / "out" / "tinycnn_fp16.xml";
  ASSERT_TRUE(WriteOpenVinoIr(kModels / "tinycnn.onnx", half, true).ok());
  fs::path bin = xml, half_bin = half;
  bin.replace_extension(".bin");
  half_bin.replace_extension(".bin");
  EXPECT_LT(fs::file_size(half_bin), fs::file_size(bin) * 0.6);
  // Nothing but the IRs is left in the folder (no staging folder).
  int entries = 0;
  for ([[maybe_unused]] const fs::directory_entry& entry :
       fs::directory_iterator(xml.parent_path())) {
    ++entries;
  }
  EXPECT_EQ(entries, 4);
  std::unique_ptr<Model> ir = LoadOk(xml);
  ASSERT_NE(ir, nullptr);
  const TensorMap sample = ImageSample(2);
  Result<TensorMap> from_ir = ir->Run(sample, {"logits"});
  ASSERT_TRUE(from_ir.ok()) << from_ir.status().ToString();
  const TensorMap expected = OrtOutputs(kModels / "tinycnn.onnx", sample, {"logits"});
  if (!expected.empty()) {
    EXPECT_LT(MaxAbsDiff(*from_ir->Find("logits"), *expected.Find("logits")), 1e-5);
  }
  Status missing = WriteOpenVinoIr(dir_.path() / "nope.onnx", dir_.path() / "nope.xml", false);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.ToString();
  const fs::path garbage = dir_.path() / "garbage.onnx";
  std::ofstream(garbage) << "not a model";
  Status unreadable = WriteOpenVinoIr(garbage, dir_.path() / "garbage.xml", false);
  EXPECT_EQ(unreadable.code(), StatusCode::kDataLoss) << unreadable.ToString();
  EXPECT_TRUE(Contains(unreadable, garbage.string())) << unreadable.ToString();
  EXPECT_FALSE(fs::exists(dir_.path() / "garbage.xml"));
}
#endif

// The real runner behind a wrapper that records each start: all samples, one process.
TEST_F(OpenVinoTest, OneRunnerServesEverySample) {
  const fs::path starts = dir_.path() / "starts.txt";
  const fs::path wrapper = WriteRunner(
      "counting.py", "import os, runpy, sys\nopen(" + ("'" + starts.string() + "'") +
                         ", 'a').write('%d\\n' % os.getpid())\nsys.argv = [" + "'" + kRealRunner +
                         "'] + sys.argv[1:]\n"
                         "runpy.run_path(sys.argv[0], run_name='__main__')\n");
  ScopedEnv runner("CONVGATE_OPENVINO_RUNNER", wrapper.string());
  std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx");
  ASSERT_NE(model, nullptr);
  for (int sample = 0; sample < 4; ++sample) {
    Result<TensorMap> outputs = model->Run(ImageSample(1, static_cast<float>(sample)), {});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  }
  std::ifstream in(starts);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 1);
}

// The protocol's start-up line, then what each mode does at the first request.
std::string FakeRunnerCode(const std::string& on_request) {
  return "import json, os, signal, sys, time\n"
         "out = os.fdopen(os.dup(1), 'w')\n"
         "out.write(json.dumps({'ok': True, 'version': 'fake', 'settings': 'fake', 'inputs': "
         "[{'name': 'image', 'type': 'float32', 'shape': [-1, 3, 16, 16]}], 'outputs': "
         "[{'name': 'logits', 'type': 'float32', 'shape': [-1, 10]}]}) + '\\n')\n"
         "out.flush()\n"
         "for line in sys.stdin:\n" +
         on_request;
}

TEST_F(OpenVinoTest, ARunnerThatDiesIsAnErrorWithItsStderr) {
  const fs::path dying = WriteRunner(
      "dying.py", FakeRunnerCode("    sys.stderr.write('fake runner: about to crash\\n')\n"
                                 "    sys.stderr.flush()\n"
                                 "    os.kill(os.getpid(), signal.SIGKILL)\n"));
  ScopedEnv runner("CONVGATE_OPENVINO_RUNNER", dying.string());
  std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx");
  ASSERT_NE(model, nullptr);
  Result<TensorMap> run = model->Run(ImageSample(1), {});
  EXPECT_EQ(run.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(run.status(), (kModels / "tinycnn.onnx").string()));
  EXPECT_TRUE(Contains(run.status(), "was killed by signal 9")) << run.status().ToString();
  EXPECT_TRUE(Contains(run.status(), "fake runner: about to crash")) << run.status().ToString();
  EXPECT_NE(model->last_log().find("about to crash"), std::string::npos);
}

TEST_F(OpenVinoTest, ARunnerThatHangsIsStoppedAtTheRunTimeoutAndRestarted) {
  const fs::path hanging = WriteRunner("hanging.py", FakeRunnerCode("    time.sleep(3600)\n"));
  ScopedEnv runner("CONVGATE_OPENVINO_RUNNER", hanging.string());
  LoadOptions options;
  options.limits.run_timeout_seconds = 1.0;
  std::unique_ptr<Model> model = LoadOk(kModels / "tinycnn.onnx", options);
  ASSERT_NE(model, nullptr);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    Result<TensorMap> run = model->Run(ImageSample(1), {});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(run.status().code(), StatusCode::kUnavailable);
    EXPECT_TRUE(Contains(run.status(), "did not finish within 1 s")) << run.status().ToString();
    EXPECT_LT(seconds, 15.0);
  }
}

TEST_F(OpenVinoTest, ARunnerThatNeverAnswersIsStoppedAtTheLoadTimeout) {
  const fs::path silent = WriteRunner("silent.py", "import time\ntime.sleep(3600)\n");
  ScopedEnv runner("CONVGATE_OPENVINO_RUNNER", silent.string());
  LoadOptions options;
  options.timeout_seconds = 1.0;
  Result<std::unique_ptr<Model>> model = Load(kModels / "tinycnn.onnx", options);
  EXPECT_EQ(model.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(model.status(), "loading the model")) << model.status().ToString();
  EXPECT_TRUE(Contains(model.status(), "did not finish within 1 s")) << model.status().ToString();
}

TEST(OpenVinoProtocolTest, HelloBecomesASignature) {
  Result<RunnerHello> hello = ParseRunnerHello(
      R"({"ok": true, "version": "v", "settings": "CPU, inference precision f32", "inputs":
      [{"name": "x", "type": "float16", "shape": [-1, 3]}, {"name": "r", "type": "i4",
      "shape": null}], "outputs": [{"name": "y", "type": "int64", "shape": []}]})");
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ(hello->settings, "CPU, inference precision f32");
  ASSERT_EQ(hello->signature.inputs.size(), 2u);
  EXPECT_EQ(hello->signature.inputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(FormatDims(hello->signature.inputs[0]), "[?, 3]");
  EXPECT_FALSE(hello->signature.inputs[1].dtype.has_value());
  EXPECT_EQ(hello->signature.inputs[1].type_name, "i4");
  EXPECT_FALSE(hello->signature.inputs[1].has_shape);
  EXPECT_EQ(FormatDims(hello->signature.outputs[0]), "[]");
}

TEST(OpenVinoProtocolTest, FailuresKeepTheirCodeAndGarbageIsDataLoss) {
  Status failed =
      ParseRunnerResponse(R"({"ok": false, "code": "NotFound", "message": "no tensor 'x'"})");
  EXPECT_EQ(failed.code(), StatusCode::kNotFound);
  EXPECT_EQ(failed.message(), "no tensor 'x'");
  EXPECT_EQ(ParseRunnerResponse(R"({"ok": false, "code": "Weird"})").code(),
            StatusCode::kUnavailable);
  EXPECT_TRUE(ParseRunnerResponse(R"({"ok": true})").ok());
  Status garbage = ParseRunnerResponse("Traceback (most recent call last):");
  EXPECT_EQ(garbage.code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(garbage, "Traceback")) << garbage.ToString();
  EXPECT_EQ(ParseRunnerHello(R"({"ok": true, "inputs": 3})").status().code(),
            StatusCode::kDataLoss);
}

TEST(OpenVinoProtocolTest, RequestsAreOneJsonLine) {
  const std::string request = RunnerRunRequest("/t/in.npz", "/t/out.npz", {"a\"b", "c\nd"});
  EXPECT_EQ(request.find('\n'), std::string::npos);
  EXPECT_EQ(request,
            R"({"inputs":"/t/in.npz","names":["a\"b","c\nd"],"op":"run","outputs":"/t/out.npz"})");
}

}  // namespace
}  // namespace convgate::backends
