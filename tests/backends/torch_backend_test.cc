// The "torch" backend on tiny TorchScript modules compiled by libtorch (torch_test_models.h):
// signatures from forward(), positional inputs and outputs, tuple/list/dict outputs, every dtype,
// and the errors (truncated archive, wrong input count, unsupported dtypes, runtime failures).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "convgate/backends/registry.h"
#include "convgate/core/python_env.h"
#include "convgate/core/subprocess.h"
#include "convgate/io/npz.h"

#if CONVGATE_WITH_TORCH
#include "backends/torch_test_models.h"
#endif

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

class TorchTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !CONVGATE_WITH_TORCH
    GTEST_SKIP() << "built without libtorch (CONVGATE_WITH_TORCH=OFF)";
#endif
    dir_ = fs::temp_directory_path() /
           ("convgate_torch_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::create_directories(dir_);
    Result<std::unique_ptr<Backend>> backend = CreateBackend("torch");
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Writes `source` as a TorchScript archive and returns its path.
  fs::path Script(const std::string& source, const std::string& file = "m.pt") {
    const fs::path path = dir_ / file;
#if CONVGATE_WITH_TORCH
    const std::string error = testing::WriteTorchScript(path, source);
    EXPECT_EQ(error, "") << source;
#endif
    return path;
  }

  Result<std::unique_ptr<Model>> Load(const fs::path& path) {
    return backend_->Load(path, LoadOptions{.intra_op_threads = 1});
  }

  std::unique_ptr<Model> LoadScript(const std::string& source) {
    Result<std::unique_ptr<Model>> model = Load(Script(source));
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return model.ok() ? std::move(model).value() : nullptr;
  }

  fs::path dir_;
  std::unique_ptr<Backend> backend_;
};

Tensor Floats(Shape shape, std::vector<float> values) {
  return Tensor::FromVector<float>(DType::kFloat32, std::move(shape), values);
}

TensorMap Inputs(std::vector<std::pair<std::string, std::vector<float>>> entries) {
  TensorMap map;
  for (auto& [name, values] : entries) {
    const auto count = static_cast<int64_t>(values.size());
    map.InsertOrAssign(name, Floats(Shape::Of({count}), values));
  }
  return map;
}

std::vector<float> ValuesOf(const TensorMap& map, const std::string& name) {
  const Tensor* tensor = map.Find(name);
  if (tensor == nullptr || tensor->dtype() != DType::kFloat32) return {};
  return {tensor->data<float>().begin(), tensor->data<float>().end()};
}

bool Contains(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

constexpr const char* kAddMul = R"(
def forward(self, a, b):
    return a + b, a * b
)";

TEST_F(TorchTest, BackendIdentity) {
  EXPECT_EQ(backend_->name(), "torch");
#ifdef CONVGATE_TORCH_VERSION
  // The libtorch CMake chose: the venv's torch wheel (2.13.0), else Debian's (1.13.0).
  EXPECT_EQ(backend_->version(), CONVGATE_TORCH_VERSION);
#endif
  EXPECT_FALSE(backend_->SupportsIntermediates());
  EXPECT_EQ(*DefaultBackendFor("model.pt"), "torch");
  EXPECT_EQ(*DefaultBackendFor("model.PTH"), "torch");
  EXPECT_EQ(*DefaultBackendFor("model.torchscript"), "torch");
}

// What current PyTorch saves: a module calling scaled_dot_product_attention (every transformer
// does), traced and saved by the venv's torch 2.13, loads and computes what torch computed. With
// Debian's libtorch 1.13 this failed: "Unknown builtin op: aten::scaled_dot_product_attention".
TEST_F(TorchTest, TorchScriptSavedByCurrentPyTorchLoads) {
  Result<fs::path> python = VenvPython();
  if (!python.ok()) GTEST_SKIP() << python.status().ToString();
  const std::string code =
      "import sys, numpy as np, torch\n"
      "class Attention(torch.nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.proj = torch.nn.Linear(8, 8)\n"
      "    def forward(self, x):\n"
      "        q = self.proj(x)\n"
      "        return torch.nn.functional.scaled_dot_product_attention(q, x, x, is_causal=True)\n"
      "torch.manual_seed(0)\n"
      "x = torch.randn(2, 4, 8)\n"
      "module = torch.jit.trace(Attention().eval(), x)\n"
      "module.save(sys.argv[1])\n"
      "np.savez(sys.argv[2], x=x.numpy(), y=module(x).detach().numpy())\n";
  const fs::path pt = dir_ / "attention.pt", expected = dir_ / "expected.npz";
  SubprocessOptions options;
  options.timeout_seconds = 300;
  Result<SubprocessResult> saved =
      RunSubprocess({python->string(), "-c", code, pt.string(), expected.string()}, options);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  if (!saved->succeeded()) GTEST_SKIP() << "the venv's torch cannot trace: " << saved->stderr_tail;
  Result<TensorMap> arrays = io::ReadNpz(expected);
  ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
  Result<std::unique_ptr<Model>> model = Load(pt);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TensorMap sample;
  sample.InsertOrAssign((*model)->signature().inputs.at(0).name, arrays->Find("x")->Clone());
  Result<TensorMap> outputs = (*model)->Run(sample, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const Tensor& got = outputs->begin()->tensor;
  const Tensor& want = *arrays->Find("y");
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    EXPECT_NEAR(got.GetDouble(i), want.GetDouble(i), 1e-5) << "element " << i;
  }
}

TEST_F(TorchTest, SignatureComesFromForwardsArgumentsWithoutTypes) {
  std::unique_ptr<Model> model = LoadScript(kAddMul);
  ASSERT_NE(model, nullptr);
  const Signature& signature = model->signature();
  ASSERT_EQ(signature.inputs.size(), 2u);
  EXPECT_EQ(signature.inputs[0].name, "a");
  EXPECT_EQ(signature.inputs[1].name, "b");
  EXPECT_EQ(signature.inputs[0].type_name, kUntypedTensor);
  EXPECT_FALSE(signature.inputs[0].dtype.has_value());
  EXPECT_FALSE(signature.inputs[0].has_shape);
  EXPECT_TRUE(signature.outputs.empty());
  EXPECT_TRUE(signature.positional_inputs);
  EXPECT_TRUE(signature.positional_outputs);
}

TEST_F(TorchTest, InputsGoByPositionAndOutputsAreNamedByPosition) {
  std::unique_ptr<Model> model = LoadScript(kAddMul);
  ASSERT_NE(model, nullptr);
  // Names differ from forward()'s on purpose: the order decides.
  Result<TensorMap> outputs = model->Run(Inputs({{"x", {1, 2}}, {"y", {10, 20}}}), {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(outputs->Names(), (std::vector<std::string>{"output_0", "output_1"}));
  EXPECT_EQ(ValuesOf(*outputs, "output_0"), (std::vector<float>{11, 22}));
  EXPECT_EQ(ValuesOf(*outputs, "output_1"), (std::vector<float>{10, 40}));
}

TEST_F(TorchTest, ASingleTensorIsOutput0) {
  std::unique_ptr<Model> model = LoadScript("def forward(self, x):\n    return x * 2.0\n");
  ASSERT_NE(model, nullptr);
  Result<TensorMap> outputs = model->Run(Inputs({{"x", {1.5f}}}), {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(outputs->Names(), std::vector<std::string>{"output_0"});
  EXPECT_EQ(ValuesOf(*outputs, "output_0"), std::vector<float>{3.0f});
}

TEST_F(TorchTest, NestedTuplesAndListsAreFlattenedInOrder) {
  std::unique_ptr<Model> model = LoadScript(R"(
def forward(self, a, b):
    return a + b, (a - b, [a * b, b])
)");
  ASSERT_NE(model, nullptr);
  Result<TensorMap> outputs = model->Run(Inputs({{"a", {3}}, {"b", {2}}}), {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 4u);
  const std::vector<float> expected{5, 1, 6, 2};
  for (size_t idx = 0; idx < expected.size(); ++idx) {
    const std::string name = "output_" + std::to_string(idx);
    EXPECT_EQ(ValuesOf(*outputs, name), std::vector<float>{expected[idx]}) << name;
  }
}

TEST_F(TorchTest, DictOutputsKeepTheirKeysInOrder) {
  std::unique_ptr<Model> model = LoadScript(R"(
def forward(self, a, b):
    return {"sum": a + b, "prod": a * b}
)");
  ASSERT_NE(model, nullptr);
  Result<TensorMap> outputs = model->Run(Inputs({{"a", {3}}, {"b", {2}}}), {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(outputs->Names(), (std::vector<std::string>{"sum", "prod"}));
  EXPECT_EQ(ValuesOf(*outputs, "prod"), std::vector<float>{6});
}

TEST_F(TorchTest, RequestedOutputsAreSelectedAndUnknownOnesNamed) {
  std::unique_ptr<Model> model = LoadScript(kAddMul);
  ASSERT_NE(model, nullptr);
  Result<TensorMap> one = model->Run(Inputs({{"a", {1}}, {"b", {2}}}), {"output_1"});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->Names(), std::vector<std::string>{"output_1"});
  Result<TensorMap> unknown = model->Run(Inputs({{"a", {1}}, {"b", {2}}}), {"conv1"});
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(unknown.status(), "no output 'conv1'")) << unknown.status().ToString();
}

// Every dtype both sides can hold survives the round trip bit for bit (an identity model).
TEST_F(TorchTest, EverySupportedDtypeRoundTrips) {
  std::unique_ptr<Model> model = LoadScript("def forward(self, x):\n    return x.clone()\n");
  ASSERT_NE(model, nullptr);
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
        DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    Tensor input = std::move(Tensor::Allocate(dtype, Shape::Of({2, 3}))).value();
    for (int64_t idx = 0; idx < input.num_elements(); ++idx) {
      input.SetDouble(idx, dtype == DType::kBool ? idx % 2 : static_cast<double>(idx) - 2.5);
    }
    TensorMap inputs;
    inputs.InsertOrAssign("x", input.Clone());
    Result<TensorMap> outputs = model->Run(inputs, {});
    ASSERT_TRUE(outputs.ok()) << DTypeName(dtype) << ": " << outputs.status().ToString();
    EXPECT_TRUE(outputs->Find("output_0")->BitwiseEquals(input)) << DTypeName(dtype);
  }
}

TEST_F(TorchTest, ArithmeticHappensInTheInputsDtype) {
  std::unique_ptr<Model> model = LoadScript("def forward(self, x):\n    return x + x\n");
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  inputs.InsertOrAssign("x", Tensor::FromVector<int32_t>(DType::kInt32, Shape::Of({2}), {7, -3}));
  Result<TensorMap> outputs = model->Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const Tensor& out = *outputs->Find("output_0");
  ASSERT_EQ(out.dtype(), DType::kInt32);
  EXPECT_EQ(out.data<int32_t>()[0], 14);
  EXPECT_EQ(out.data<int32_t>()[1], -6);
}

TEST_F(TorchTest, UnsignedWiderThanEightBitsIsUnimplementedNamingTheInput) {
  std::unique_ptr<Model> model = LoadScript("def forward(self, x):\n    return x\n");
  ASSERT_NE(model, nullptr);
  for (DType dtype : {DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    TensorMap inputs;
    inputs.InsertOrAssign("ids", std::move(Tensor::Allocate(dtype, Shape::Of({2}))).value());
    Result<TensorMap> outputs = model->Run(inputs, {});
    EXPECT_EQ(outputs.status().code(), StatusCode::kUnimplemented) << DTypeName(dtype);
    EXPECT_TRUE(Contains(outputs.status(), "input 'ids' is " + std::string(DTypeName(dtype))))
        << outputs.status().ToString();
  }
}

TEST_F(TorchTest, AWrongInputCountIsFailedPreconditionNamingTheModel) {
  std::unique_ptr<Model> model = LoadScript(kAddMul);
  ASSERT_NE(model, nullptr);
  Result<TensorMap> outputs = model->Run(Inputs({{"a", {1}}}), {});
  EXPECT_EQ(outputs.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(outputs.status(), (dir_ / "m.pt").string())) << outputs.status().ToString();
  EXPECT_TRUE(Contains(outputs.status(), "takes 2 input(s) by position (a, b), but 1 were given"))
      << outputs.status().ToString();
}

TEST_F(TorchTest, AFailureInsideForwardIsUnavailableWithTheCauseOnly) {
  std::unique_ptr<Model> model = LoadScript("def forward(self, a, b):\n    return a @ b\n");
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  inputs.InsertOrAssign("a", Floats(Shape::Of({2, 3}), {1, 2, 3, 4, 5, 6}));
  inputs.InsertOrAssign("b", Floats(Shape::Of({2, 3}), {1, 2, 3, 4, 5, 6}));
  Result<TensorMap> outputs = model->Run(inputs, {});
  const Status status = outputs.status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(status, "forward() failed: RuntimeError: ")) << status.message();
  EXPECT_TRUE(Contains(status, "2x3")) << status.message();  // libtorch's words kept
  EXPECT_FALSE(Contains(status, "Traceback")) << status.message();
}

TEST_F(TorchTest, ATruncatedArchiveIsDataLossNamingTheFile) {
  const fs::path path = Script(kAddMul);
  const auto size = fs::file_size(path);
  fs::resize_file(path, size / 2);
  Result<std::unique_ptr<Model>> model = Load(path);
  EXPECT_EQ(model.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(model.status(), path.string() + ": not a TorchScript archive"))
      << model.status().ToString();
}

TEST_F(TorchTest, AFileThatIsNoArchiveIsDataLossAndAMissingOneNotFound) {
  const fs::path text = dir_ / "notes.pt";
  std::ofstream(text) << "not a model\n";
  EXPECT_EQ(Load(text).status().code(), StatusCode::kDataLoss);
  Result<std::unique_ptr<Model>> missing = Load(dir_ / "absent.pt");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status(), "absent.pt")) << missing.status().ToString();
}

TEST_F(TorchTest, NonTensorArgumentsAreListedAndRefusedAtRun) {
  std::unique_ptr<Model> model = LoadScript("def forward(self, x, k: int):\n    return x * k\n");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->signature().inputs.size(), 2u);
  EXPECT_EQ(model->signature().inputs[1].type_name, "int");
  Result<TensorMap> outputs = model->Run(Inputs({{"x", {1}}, {"k", {2}}}), {});
  EXPECT_EQ(outputs.status().code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(outputs.status(), "argument 'k' is int")) << outputs.status().ToString();
}

TEST_F(TorchTest, ArgumentsWithDefaultsKeepThem) {
  std::unique_ptr<Model> model =
      LoadScript("def forward(self, x, scale: float = 3.0):\n    return x * scale\n");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->signature().inputs.size(), 1u);
  Result<TensorMap> outputs = model->Run(Inputs({{"x", {2}}}), {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(ValuesOf(*outputs, "output_0"), std::vector<float>{6});
}

TEST_F(TorchTest, UnsupportedOutputsAreUnimplemented) {
  std::unique_ptr<Model> model = LoadScript("def forward(self, x):\n    return x.sum().item()\n");
  ASSERT_NE(model, nullptr);
  Result<TensorMap> outputs = model->Run(Inputs({{"x", {1, 2}}}), {});
  EXPECT_EQ(outputs.status().code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(outputs.status(), "forward() returned a")) << outputs.status().ToString();
}

}  // namespace
}  // namespace convgate::backends
