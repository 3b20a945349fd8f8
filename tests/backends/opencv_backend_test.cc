// The "opencv" backend (OpenCV DNN 4.6 reading ONNX) against ONNX Runtime and hand computation.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "convgate/backends/registry.h"
#include "graph/onnx_test_util.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = fs::path(CONVGATE_BINARY_DIR) / "examples";

class OpenCvTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !CONVGATE_WITH_OPENCV
    GTEST_SKIP() << "built without OpenCV DNN (CONVGATE_WITH_OPENCV=OFF)";
#endif
    Result<std::unique_ptr<Backend>> backend = CreateBackend("opencv");
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
  }

  Result<std::unique_ptr<Model>> Load(const fs::path& path) {
    return backend_->Load(path, LoadOptions{.intra_op_threads = 1});
  }

  Result<std::unique_ptr<Model>> LoadText(const std::string& text) {
    const fs::path path = dir_.path() / "m.onnx";
    testing::WriteModel(testing::ParseOnnxText(text), path);
    return Load(path);
  }

  testing::ScopedTempDir dir_;
  std::unique_ptr<Backend> backend_;
};

// A deterministic image with values in [0, 1), different in every element.
TensorMap TinyCnnInput(int64_t batch) {
  std::vector<float> values(batch * 3 * 16 * 16);
  for (size_t idx = 0; idx < values.size(); ++idx) values[idx] = std::fmod(idx * 0.37f, 1.0f);
  TensorMap inputs;
  inputs.InsertOrAssign(
      "image", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({batch, 3, 16, 16}), values));
  return inputs;
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0.0;
  for (int64_t idx = 0; idx < std::min(a.num_elements(), b.num_elements()); ++idx) {
    worst = std::max(worst, std::abs(a.GetDouble(idx) - b.GetDouble(idx)));
  }
  return worst;
}

bool Contains(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

TEST_F(OpenCvTest, BackendReportsItsVersionAndIntermediates) {
  EXPECT_EQ(backend_->name(), "opencv");
  EXPECT_EQ(backend_->version().substr(0, 2), "4.");
  EXPECT_TRUE(backend_->SupportsIntermediates());
}

TEST_F(OpenCvTest, SignatureComesFromTheOnnxGraph) {
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Signature& signature = (*model)->signature();
  ASSERT_EQ(signature.inputs.size(), 1u);
  EXPECT_EQ(signature.inputs[0].name, "image");
  EXPECT_EQ(FormatDims(signature.inputs[0]), "[batch, 3, 16, 16]");
  ASSERT_EQ(signature.outputs.size(), 2u);
  EXPECT_EQ(signature.outputs[0].name, "logits");
  EXPECT_EQ(signature.outputs[1].name, "probs");
  EXPECT_FALSE(signature.positional_inputs);
}

TEST_F(OpenCvTest, TinyCnnMatchesOnnxRuntime) {
#if !CONVGATE_WITH_ONNXRUNTIME
  GTEST_SKIP() << "built without ONNX Runtime, the reference";
#endif
  Result<std::unique_ptr<Model>> opencv = Load(kExamples / "tinycnn.onnx");
  ASSERT_TRUE(opencv.ok()) << opencv.status().ToString();
  Result<std::unique_ptr<Backend>> ort_backend = CreateBackend("ort");
  ASSERT_TRUE(ort_backend.ok());
  Result<std::unique_ptr<Model>> ort = (*ort_backend)->Load(kExamples / "tinycnn.onnx", {});
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  for (int64_t batch : {1, 3}) {
    Result<TensorMap> got = (*opencv)->Run(TinyCnnInput(batch), {});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    Result<TensorMap> want = (*ort)->Run(TinyCnnInput(batch), {});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    EXPECT_EQ(got->Names(), (std::vector<std::string>{"logits", "probs"}));
    for (const char* name : {"logits", "probs"}) {
      EXPECT_EQ(got->Find(name)->shape(), Shape::Of({batch, 10})) << name;
      EXPECT_EQ(got->Find(name)->dtype(), DType::kFloat32) << name;
      // float32 kernels that sum in different orders: ~1e-6 apart on values of order 1.
      EXPECT_LT(MaxAbsDiff(*got->Find(name), *want->Find(name)), 1e-4) << name;
    }
  }
}

TEST_F(OpenCvTest, IntermediateLayersMatchOnnxRuntime) {
#if !CONVGATE_WITH_ONNXRUNTIME
  GTEST_SKIP() << "built without ONNX Runtime, the reference";
#endif
  Result<std::unique_ptr<Model>> opencv = Load(kExamples / "tinycnn.onnx");
  ASSERT_TRUE(opencv.ok()) << opencv.status().ToString();
  Result<std::unique_ptr<Model>> ort =
      (*CreateBackend("ort"))->Load(kExamples / "tinycnn.onnx", {});
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  // conv and bn are fused with their neighbours in a plain run; asking for them keeps them apart.
  const std::vector<std::string> names = {"conv", "bn", "relu", "features", "logits"};
  Result<TensorMap> got = (*opencv)->Run(TinyCnnInput(2), names);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  Result<TensorMap> want = (*ort)->Run(TinyCnnInput(2), names);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_EQ(got->Names(), names);
  for (const std::string& name : names) {
    EXPECT_EQ(got->Find(name)->shape(), want->Find(name)->shape()) << name;
    EXPECT_LT(MaxAbsDiff(*got->Find(name), *want->Find(name)), 1e-4) << name;
  }
  // conv and bn differ, so the conv values really are the convolution's, not the fused layer's.
  EXPECT_GT(MaxAbsDiff(*got->Find("conv"), *got->Find("bn")), 0.01);
}

// Nodes without names: OpenCV names their layers after their first output.
constexpr char kUnnamedChain[] = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[N, 4] x) => (float[N, 4] y) <float[4] w = {2.0, -3.0, 0.5, 1.0}>
{
  t = Mul(x, w)
  u = Relu(t)
  y = Add(u, x)
}
)";

TEST_F(OpenCvTest, IntermediatesOfUnnamedNodesAreExact) {
  Result<std::unique_ptr<Model>> model = LoadText(kUnnamedChain);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TensorMap inputs;
  inputs.InsertOrAssign("x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2, 4}),
                                                       {1, 2, -3, 4, -1, -2, 3, -4}));
  Result<TensorMap> got = (*model)->Run(inputs, {"u", "y", "t"});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const std::vector<float> x = {1, 2, -3, 4, -1, -2, 3, -4};
  const std::vector<float> w = {2.0f, -3.0f, 0.5f, 1.0f};
  for (size_t idx = 0; idx < x.size(); ++idx) {
    const float t = x[idx] * w[idx % 4];
    const float u = std::max(t, 0.0f);
    EXPECT_EQ(got->Find("t")->data<float>()[idx], t) << idx;
    EXPECT_EQ(got->Find("u")->data<float>()[idx], u) << idx;
    EXPECT_EQ(got->Find("y")->data<float>()[idx], u + x[idx]) << idx;
  }
}

TEST_F(OpenCvTest, UnknownIntermediateIsNotFoundNamingTheModel) {
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Result<TensorMap> got = (*model)->Run(TinyCnnInput(1), {"no_such_tensor"});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(got.status(), "tinycnn.onnx")) << got.status().ToString();
  EXPECT_TRUE(Contains(got.status(), "no_such_tensor")) << got.status().ToString();
  Result<TensorMap> twice = (*model)->Run(TinyCnnInput(1), {"relu", "relu"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(OpenCvTest, SecondOutputOfANodeIsUnimplemented) {
  Result<std::unique_ptr<Model>> model = LoadText(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 4] x) => (float[1, 4] y) <int64[2] split = {2, 2}>
{
  a, b = Split<axis = 1>(x, split)
  y = Concat<axis = 1>(b, a)
}
)");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TensorMap inputs;
  inputs.InsertOrAssign(
      "x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1, 4}), {1, 2, 3, 4}));
  Result<TensorMap> plain = (*model)->Run(inputs, {});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(std::vector<float>(plain->Find("y")->data<float>().begin(),
                               plain->Find("y")->data<float>().end()),
            (std::vector<float>{3, 4, 1, 2}));
  Result<TensorMap> second = (*model)->Run(inputs, {"b"});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(second.status(), "first output")) << second.status().ToString();
}

TEST_F(OpenCvTest, ModelOpenCvCannotImportIsUnavailableWithOpenCvsReason) {
  // tokens.onnx gathers from an embedding with a runtime index, which OpenCV 4.6 cannot import.
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tokens.onnx");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnavailable);
  const std::string message = model.status().message();
  EXPECT_TRUE(Contains(model.status(), (kExamples / "tokens.onnx").string())) << message;
  EXPECT_TRUE(Contains(model.status(), "OpenCV DNN 4.6.0 cannot load this model")) << message;
  EXPECT_TRUE(Contains(model.status(), "Gather")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// What breaks mobilenet_v2 at opset >= 11: Clip takes min and max as inputs from opset 11 on, and
// OpenCV 4.6 accepts only the attribute form.
TEST_F(OpenCvTest, ClipWithMinMaxInputsIsTheMobileNetFailure) {
  Result<std::unique_ptr<Model>> model = LoadText(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 4] x) => (float[1, 4] y)
{
  lo = Constant<value = float {0.0}>()
  hi = Constant<value = float {6.0}>()
  y = Clip(x, lo, hi)
}
)");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(model.status(), "Clip")) << model.status().ToString();
  EXPECT_TRUE(Contains(model.status(), "input_size")) << model.status().ToString();
}

// OpenCV 4.6 reads external weights as empty matrices; the backend refuses such models up front.
TEST_F(OpenCvTest, ExternalDataIsUnimplementedNotSilentlyEmpty) {
  onnx::ModelProto proto = testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 3] x) => (float[1, 2] y) { r = Relu(x)  y = MatMul(r, w) }
)");
  onnx::TensorProto* w = proto.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] :
       {std::pair{"location", "weights.bin"}, {"offset", "0"}, {"length", "24"}}) {
    onnx::StringStringEntryProto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  const std::vector<float> weights = {1, 2, 3, 4, 5, 6};
  std::ofstream(dir_.path() / "weights.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(weights.data()), 24);
  testing::WriteModel(proto, dir_.path() / "ext.onnx");
  Result<std::unique_ptr<Model>> model = Load(dir_.path() / "ext.onnx");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(model.status(), "external data")) << model.status().ToString();
}

TEST_F(OpenCvTest, UnparseableFileIsDataLossNotACrash) {
  const fs::path path = dir_.path() / "junk.onnx";
  testing::WriteModel(testing::ParseOnnxText(kUnnamedChain), path);
  fs::resize_file(path, 40);
  Result<std::unique_ptr<Model>> model = Load(path);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(model.status(), path.string()));
  Result<std::unique_ptr<Model>> missing = Load(dir_.path() / "absent.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST_F(OpenCvTest, WrongInputIsFailedPreconditionBeforeOpenCvRuns) {
  Result<std::unique_ptr<Model>> model = Load(kExamples / "tinycnn.onnx");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TensorMap wrong;
  wrong.InsertOrAssign("image", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1, 3, 8, 8}),
                                                          std::vector<float>(3 * 8 * 8, 0.5f)));
  Result<TensorMap> got = (*model)->Run(wrong, {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(got.status(), "'image'")) << got.status().ToString();
  Result<TensorMap> missing = (*model)->Run(TensorMap(), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status(), "missing")) << missing.status().ToString();
}

}  // namespace
}  // namespace convgate::backends
