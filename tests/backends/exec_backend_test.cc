// The "exec" backend: the protocol's pieces, then real processes (examples/exec/numpy_runner.py
// and tests/fixtures/fake_runner.py run by Debian's /usr/bin/python3).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backends/exec/exec_protocol.h"
#include "convgate/backends/registry.h"
#include "graph/onnx_test_util.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = fs::path(CONVGATE_BINARY_DIR) / "examples";
const fs::path kSource = fs::path(CONVGATE_SOURCE_DIR);
const std::string kPython = "/usr/bin/python3";

bool Contains(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

Tensor Floats(Shape shape, float value) {
  return Tensor::FromVector<float>(DType::kFloat32, shape,
                                   std::vector<float>(shape.NumElements(), value));
}

TEST(ExecProtocol, TemplateNeedsACommandAndAnOutputsPlaceholder) {
  EXPECT_TRUE(CheckTemplate({"run", "{model}", "{inputs}", "{outputs}"}).ok());
  EXPECT_TRUE(CheckTemplate({"run", "--out={outputs}"}).ok());
  EXPECT_EQ(CheckTemplate({}).code(), StatusCode::kInvalidArgument);
  Status no_outputs = CheckTemplate({"run", "{model}", "{inputs}"});
  EXPECT_EQ(no_outputs.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(no_outputs, "{outputs}"));
}

TEST(ExecProtocol, ServingTemplatesNeedBothFolders) {
  EXPECT_TRUE(CheckTemplate({"run", "{model}", "{inputs_dir}", "{outputs_dir}"}).ok());
  EXPECT_TRUE(ServesEverySample({"run", "{model}", "--in={inputs_dir}", "{outputs_dir}"}));
  EXPECT_FALSE(ServesEverySample({"run", "{model}", "{inputs}", "{outputs}"}));
  Status half = CheckTemplate({"run", "{model}", "{inputs_dir}"});
  EXPECT_EQ(half.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(half, "{outputs_dir}")) << half.message();
  EXPECT_EQ(CheckTemplate({"run", "{outputs_dir}", "{outputs}"}).code(),
            StatusCode::kInvalidArgument);
}

TEST(ExecProtocol, PlaceholdersAreReplacedInsideArgumentsAndNothingElse) {
  const ExecPaths paths{"/m/model.xml", "/t/inputs.npz", "/t/outputs.npz", "/t/in", "/t/out"};
  EXPECT_EQ(
      SubstitutePlaceholders(
          {"run", "{model}", "--in={inputs}", "{outputs}{outputs}", "-c", "d = {}; e = {other}"},
          paths),
      (std::vector<std::string>{"run", "/m/model.xml", "--in=/t/inputs.npz",
                                "/t/outputs.npz/t/outputs.npz", "-c", "d = {}; e = {other}"}));
  EXPECT_EQ(SubstitutePlaceholders({"{inputs_dir}", "--out={outputs_dir}"}, paths),
            (std::vector<std::string>{"/t/in", "--out=/t/out"}));
}

TEST(ExecProtocol, ProgramsAreFoundOnPathOrByPath) {
  Result<fs::path> python = FindProgram("python3");
  ASSERT_TRUE(python.ok()) << python.status().ToString();
  EXPECT_TRUE(FindProgram(kPython).ok());
  Result<fs::path> missing = FindProgram("convgate-no-such-runner");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status(), "convgate-no-such-runner"));
  EXPECT_EQ(FindProgram("/no/such/dir/runner").status().code(), StatusCode::kNotFound);
  // A file that exists but cannot be executed.
  testing::ScopedTempDir dir;
  const fs::path plain = dir.path() / "plain.sh";
  std::ofstream(plain) << "#!/bin/sh\n";
  fs::permissions(plain, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(FindProgram(plain.string()).status().code(), StatusCode::kFailedPrecondition);
}

TEST(ExecProtocol, SelectOutputsByRequestByDeclarationOrAsWritten) {
  Signature declared;
  declared.outputs = {{"logits", DType::kFloat32, "float32", false, {}, {}},
                      {"probs", DType::kFloat32, "float32", false, {}, {}}};
  auto written = [] {
    TensorMap tensors;
    tensors.InsertOrAssign("probs", Floats(Shape::Of({2}), 0.5f));
    tensors.InsertOrAssign("logits", Floats(Shape::Of({2}), 1.0f));
    tensors.InsertOrAssign("extra", Floats(Shape::Of({1}), 2.0f));
    return tensors;
  };
  EXPECT_EQ(SelectOutputs(written(), declared, {}, "o.npz")->Names(),
            (std::vector<std::string>{"logits", "probs"}));
  EXPECT_EQ(SelectOutputs(written(), declared, {"extra"}, "o.npz")->Names(),
            (std::vector<std::string>{"extra"}));
  Result<TensorMap> absent = SelectOutputs(written(), declared, {"nope"}, "o.npz");
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
  Signature unknown;
  unknown.positional_outputs = true;
  EXPECT_EQ(SelectOutputs(written(), unknown, {}, "o.npz")->Names(),
            (std::vector<std::string>{"probs", "logits", "extra"}));
}

TEST(ExecProtocol, NumpysPositionalNamesMapToDeclaredOutputsInOrder) {
  Signature declared;
  declared.outputs = {{"logits", DType::kFloat32, "float32", false, {}, {}},
                      {"probs", DType::kFloat32, "float32", false, {}, {}}};
  TensorMap positional;
  positional.InsertOrAssign("arr_0", Floats(Shape::Of({2}), 1.0f));
  positional.InsertOrAssign("arr_1", Floats(Shape::Of({2}), 0.5f));
  Result<TensorMap> mapped = SelectOutputs(std::move(positional), declared, {}, "o.npz");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(mapped->Names(), (std::vector<std::string>{"logits", "probs"}));
  EXPECT_EQ(mapped->Find("probs")->data<float>()[0], 0.5f);
  // Wrong names are the command's fault: DataLoss naming what is missing and what is there.
  TensorMap wrong;
  wrong.InsertOrAssign("foo", Floats(Shape::Of({2}), 1.0f));
  Result<TensorMap> failed = SelectOutputs(std::move(wrong), declared, {}, "o.npz");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(failed.status(), "no output 'logits' (it holds: foo)"))
      << failed.status().ToString();
}

TEST(ExecProtocol, FailureMessageSaysHowTheCommandEndedAndQuotesItsStderr) {
  SubprocessResult exited;
  exited.exit_code = 3;
  exited.stderr_tail = "line 1\nline 2\nRuntimeError: boom\n";
  Status status = CommandFailure(exited, "exec command `x` on m.xml");
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            "exec command `x` on m.xml exited with code 3; its stderr ends:\nline 1\nline 2\n"
            "RuntimeError: boom");
  SubprocessResult silent;
  silent.signal = 9;
  EXPECT_TRUE(Contains(CommandFailure(silent, "cmd"), "printed nothing on stderr"));
}

class ExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPython)) GTEST_SKIP() << "needs Debian's " << kPython << " with numpy";
    // Every run's temporary folder must go away: point TMPDIR at a folder the test inspects.
    old_tmpdir_ = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
    ::setenv("TMPDIR", tmp_.path().c_str(), 1);
    backend_ = std::move(CreateBackend("exec")).value();
  }
  void TearDown() override {
    if (old_tmpdir_.empty()) {
      ::unsetenv("TMPDIR");
    } else {
      ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    }
  }

  Result<std::unique_ptr<Model>> Load(const fs::path& model, std::vector<std::string> argv,
                                      double timeout = 60) {
    LoadOptions options;
    options.exec_argv = std::move(argv);
    options.timeout_seconds = timeout;
    return backend_->Load(model, options);
  }

  std::vector<std::string> Fake(const std::string& mode) const {
    return {kPython,    (kSource / "tests/fixtures/fake_runner.py").string(),
            mode,       "{model}",
            "{inputs}", "{outputs}"};
  }

  bool TmpIsEmpty() const { return fs::is_empty(tmp_.path()); }

  testing::ScopedTempDir tmp_;
  std::string old_tmpdir_;
  std::unique_ptr<Backend> backend_;
};

TensorMap Image(int64_t batch) {
  std::vector<float> values(batch * 3 * 16 * 16);
  for (size_t idx = 0; idx < values.size(); ++idx) values[idx] = std::fmod(idx * 0.37f, 1.0f);
  TensorMap inputs;
  inputs.InsertOrAssign(
      "image", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({batch, 3, 16, 16}), values));
  return inputs;
}

std::vector<std::string> NumpyRunner() {
  return {kPython, (kSource / "examples/exec/numpy_runner.py").string(), "{model}", "{inputs}",
          "{outputs}"};
}

TEST_F(ExecTest, NumpyRunnerComputesTinyCnnLikeOnnxRuntime) {
#if !CONVGATE_WITH_ONNXRUNTIME
  GTEST_SKIP() << "built without ONNX Runtime, the reference";
#endif
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn_weights.npz", NumpyRunner());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // Not an .onnx file: names and types are unknown until the command runs.
  EXPECT_TRUE((*model)->signature().positional_inputs);
  EXPECT_TRUE((*model)->signature().positional_outputs);
  EXPECT_TRUE((*model)->signature().outputs.empty());
  Result<TensorMap> got = (*model)->Run(Image(2), {});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  Result<std::unique_ptr<Model>> ort =
      (*CreateBackend("ort"))->Load(kExamples / "tinycnn.onnx", {});
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  Result<TensorMap> want = (*ort)->Run(Image(2), {});
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(got->Names(), (std::vector<std::string>{"logits", "probs"}));
  for (const char* name : {"logits", "probs"}) {
    const Tensor& a = *got->Find(name);
    const Tensor& b = *want->Find(name);
    ASSERT_EQ(a.shape(), b.shape()) << name;
    for (int64_t idx = 0; idx < a.num_elements(); ++idx) {
      EXPECT_NEAR(a.GetDouble(idx), b.GetDouble(idx), 1e-4) << name << "[" << idx << "]";
    }
  }
  EXPECT_EQ((*model)->last_log(), "");
  EXPECT_TRUE(TmpIsEmpty());
}

TEST_F(ExecTest, OnnxModelsKeepTheirDeclaredSignature) {
  // The runner hard-codes its weights; the .onnx given as the model supplies names and types.
  std::vector<std::string> argv = NumpyRunner();
  argv[2] = (kExamples / "tinycnn_weights.npz").string();
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx", argv);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_FALSE((*model)->signature().positional_outputs);
  ASSERT_EQ((*model)->signature().outputs.size(), 2u);
  Result<TensorMap> got = (*model)->Run(Image(1), {"probs"});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->Names(), (std::vector<std::string>{"probs"}));
  // Declared inputs are checked before any process starts.
  TensorMap wrong;
  wrong.InsertOrAssign("pixels", Floats(Shape::Of({1, 3, 16, 16}), 0.0f));
  EXPECT_EQ((*model)->Run(wrong, {}).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(ExecTest, MissingProgramIsNotFoundAtLoad) {
  Result<std::unique_ptr<Model>> model =
      Load(kExamples / "tinycnn.onnx", {"convgate-no-such-runner", "{inputs}", "{outputs}"});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(model.status(), "convgate-no-such-runner"));
  Result<std::unique_ptr<Model>> no_model = Load(kExamples / "absent.xml", Fake("nothing"));
  EXPECT_EQ(no_model.status().code(), StatusCode::kNotFound);
}

TEST_F(ExecTest, TimeoutKillsTheCommandPromptly) {
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx", Fake("sleep"), 1.0);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  Result<TensorMap> got = (*model)->Run(Image(1), {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(got.status(), "timed out after")) << got.status().ToString();
  // 1 s limit, SIGTERM ends python at once; the 2 s kill grace is never reached.
  EXPECT_LT(seconds, 5.0);
  EXPECT_TRUE(TmpIsEmpty());
}

TEST_F(ExecTest, NonZeroExitIsUnavailableWithTheStderrTail) {
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx", Fake("fail"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Result<TensorMap> got = (*model)->Run(Image(1), {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(got.status(), "exited with code 3")) << got.status().ToString();
  EXPECT_TRUE(Contains(got.status(), "RuntimeError: simulated runtime failure"));
  EXPECT_NE((*model)->last_log().find("fake_runner: loading the model"), std::string::npos);
  EXPECT_TRUE(TmpIsEmpty());
}

TEST_F(ExecTest, LogKeepsOnlyTheLast64KiB) {
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx", Fake("noisy"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Result<TensorMap> got = (*model)->Run(Image(1), {});
  ASSERT_FALSE(got.ok());
  const std::string log = (*model)->last_log();
  EXPECT_LE(log.size(), 64u * 1024u);
  EXPECT_GT(log.size(), 60u * 1024u);
  EXPECT_NE(log.find("RuntimeError: failure after a lot of output"), std::string::npos);
  EXPECT_EQ(log.find("noise line 00000"), std::string::npos);
  // The message quotes only the last lines.
  EXPECT_LT(got.status().message().size(), 2000u);
}

TEST_F(ExecTest, MissingOrCorruptOutputsAreDataLoss) {
  for (const std::string mode : {"nothing", "garbage"}) {
    Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx", Fake(mode));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    Result<TensorMap> got = (*model)->Run(Image(1), {});
    ASSERT_FALSE(got.ok()) << mode;
    EXPECT_EQ(got.status().code(), StatusCode::kDataLoss) << mode;
    const std::string expected = mode == "nothing" ? "exited 0 but wrote no outputs.npz"
                                                   : "cannot read the outputs.npz it wrote";
    EXPECT_TRUE(Contains(got.status(), expected)) << got.status().ToString();
  }
  EXPECT_TRUE(TmpIsEmpty());
}

TEST_F(ExecTest, WrongOutputNamesAreDataLossNamingBoth) {
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx", Fake("wrong-names"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Result<TensorMap> got = (*model)->Run(Image(1), {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(got.status(), "no output 'logits' (it holds: foo, bar)"))
      << got.status().ToString();
}

}  // namespace
}  // namespace convgate::backends
