// Fetching intermediate values through the "ort" backend, and models with external data.
#include <fstream>
#include <thread>

#include "backends/ort_test_fixture.h"

namespace convgate::backends {
namespace {

constexpr char kChain[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 2] x) => (float[N, 2] y) <float[2] w = {2.0, -3.0}>
{
  t = Mul(x, w)
  u = Relu(t)
  y = Add(u, x)
}
)";

TensorMap ChainInputs() {
  TensorMap inputs;
  EXPECT_TRUE(
      inputs
          .Insert("x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2, 2}), {1, 2, -3, 4}))
          .ok());
  return inputs;
}

std::vector<float> Values(const Tensor& tensor) {
  return {tensor.data<float>().begin(), tensor.data<float>().end()};
}

TEST_F(OrtTest, FetchesIntermediatesEqualToIndependentComputation) {
  std::unique_ptr<Model> model = LoadText(kChain);
  ASSERT_NE(model, nullptr);
  Result<TensorMap> outputs = model->Run(ChainInputs(), {"u", "y", "t"});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(outputs->Names(), (std::vector<std::string>{"u", "y", "t"}));
  // t = x * [2, -3]; u = relu(t); y = u + x.
  const std::vector<float> x = {1, 2, -3, 4};
  std::vector<float> t(4), u(4), y(4);
  for (size_t idx = 0; idx < 4; ++idx) {
    t[idx] = x[idx] * (idx % 2 == 0 ? 2.0f : -3.0f);
    u[idx] = t[idx] > 0 ? t[idx] : 0;
    y[idx] = u[idx] + x[idx];
  }
  EXPECT_EQ(Values(*outputs->Find("t")), t);
  EXPECT_EQ(Values(*outputs->Find("u")), u);
  EXPECT_EQ(Values(*outputs->Find("y")), y);

  // The declared outputs alone still come from the original session, unchanged.
  Result<TensorMap> plain = model->Run(ChainInputs(), {});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->Names(), (std::vector<std::string>{"y"}));
  EXPECT_EQ(Values(*plain->Find("y")), y);
}

TEST_F(OrtTest, IntermediateRequestsMayRepeatAndAlternate) {
  std::unique_ptr<Model> model = LoadText(kChain);
  ASSERT_NE(model, nullptr);
  for (int round = 0; round < 2; ++round) {
    for (const std::vector<std::string>& names :
         std::vector<std::vector<std::string>>{{"t"}, {"u", "t"}, {"t", "u"}, {"w"}, {"x", "u"}}) {
      Result<TensorMap> outputs = model->Run(ChainInputs(), names);
      ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
      EXPECT_EQ(outputs->Names(), names);
    }
  }
}

TEST_F(OrtTest, ConcurrentRunsAgree) {
  std::unique_ptr<Model> model = LoadText(kChain);
  ASSERT_NE(model, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (size_t thread_idx = 0; thread_idx < ok.size(); ++thread_idx) {
    threads.emplace_back([&, thread_idx] {
      const std::vector<std::string> names =
          thread_idx % 2 ? std::vector<std::string>{"t"} : std::vector<std::string>{"y", "u"};
      Result<TensorMap> outputs = model->Run(ChainInputs(), names);
      ok[thread_idx] = outputs.ok() && outputs->Names() == names;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

TEST_F(OrtTest, UnknownIntermediateIsNotFoundAndDuplicatesAreRefused) {
  std::unique_ptr<Model> model = LoadText(kChain);
  ASSERT_NE(model, nullptr);
  Result<TensorMap> unknown = model->Run(ChainInputs(), {"t", "nope"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(unknown.status(), "'nope'")) << unknown.status().ToString();
  EXPECT_TRUE(Contains(unknown.status(), PathOf("m.onnx"))) << unknown.status().ToString();

  Result<TensorMap> twice = model->Run(ChainInputs(), {"t", "t"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(OrtTest, ChangedFileIsNotReloadedSilently) {
  std::unique_ptr<Model> model = LoadText(kChain);
  ASSERT_NE(model, nullptr);
  // Different content and size: an intermediate session would run another model.
  Write(testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 2] x) => (float[N, 2] y) { t = Neg(x)  y = Abs(t) }
)"),
        "m.onnx");
  Result<TensorMap> outputs = model->Run(ChainInputs(), {"t"});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(outputs.status(), "changed")) << outputs.status().ToString();
}

// y = Relu(x) @ w with w (float[3, 2]) stored in weights.bin beside the model.
onnx::ModelProto ExternalDataModel() {
  onnx::ModelProto proto = testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 3] x) => (float[N, 2] y) { r = Relu(x)  y = MatMul(r, w) }
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
  return proto;
}

TEST_F(OrtTest, LoadsAndRunsModelWithExternalData) {
  const std::vector<float> weights = {1, 2, 3, 4, 5, 6};
  std::ofstream(PathOf("weights.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(weights.data()), 24);
  Result<std::unique_ptr<Model>> model = Load(Write(ExternalDataModel(), "ext.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TensorMap inputs;
  ASSERT_TRUE(
      inputs.Insert("x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1, 3}), {1, -1, 2}))
          .ok());
  // Intermediates load the WithOutputs copy from bytes too, so they need the folder as well.
  Result<TensorMap> outputs = (*model)->Run(inputs, {"y", "r"});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(Values(*outputs->Find("r")), (std::vector<float>{1, 0, 2}));
  EXPECT_EQ(Values(*outputs->Find("y")), (std::vector<float>{1 + 10, 2 + 12}));
}

TEST_F(OrtTest, MissingExternalDataFileNamesTheModel) {
  Result<std::unique_ptr<Model>> model = Load(Write(ExternalDataModel(), "ext.onnx"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound) << model.status().ToString();
  EXPECT_TRUE(Contains(model.status(), PathOf("ext.onnx"))) << model.status().ToString();
  EXPECT_TRUE(Contains(model.status(), "weights.bin")) << model.status().ToString();
}

// Sessions read weights stored in the model (raw_data, packed float_data) from the file itself as
// external data; through a symbolic link from another folder (the Hugging Face cache's layout)
// too. The values must be those of the weights, for plain and intermediate sessions.
TEST_F(OrtTest, WeightsReadFromTheFileThroughALinkGiveTheModelsValues) {
  constexpr int kSize = 600;  // 2400 bytes a weight, over what a model's structure keeps inline
  onnx::ModelProto proto = testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[600] x) => (float[600] y)
{
  t = Mul(x, w)
  y = Add(t, b)
}
)");
  onnx::TensorProto& w = *proto.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(kSize);
  std::vector<float> w_values(kSize), b_values(kSize), x_values(kSize);
  for (int idx = 0; idx < kSize; ++idx) {
    w_values[idx] = 0.25f * static_cast<float>(idx);
    b_values[idx] = -1.0f * static_cast<float>(idx % 7);
    x_values[idx] = 1.0f + static_cast<float>(idx % 3);
  }
  w.set_raw_data(std::string(reinterpret_cast<const char*>(w_values.data()), kSize * 4));
  onnx::TensorProto& b = *proto.mutable_graph()->add_initializer();
  b.set_name("b");
  b.set_data_type(onnx::TensorProto::FLOAT);
  b.add_dims(kSize);
  for (float value : b_values) b.add_float_data(value);
  std::filesystem::create_directory(dir_.path() / "blobs");
  std::filesystem::create_directory(dir_.path() / "snapshot");
  Write(proto, "blobs/m.onnx");
  const std::filesystem::path link = dir_.path() / "snapshot" / "m.onnx";
  std::filesystem::create_symlink(dir_.path() / "blobs" / "m.onnx", link);
  Result<std::unique_ptr<Model>> model = Load(link);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TensorMap inputs;
  ASSERT_TRUE(
      inputs.Insert("x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({kSize}), x_values))
          .ok());
  Result<TensorMap> plain = (*model)->Run(inputs, {});
  Result<TensorMap> marked = (*model)->Run(inputs, {"t", "y"});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  std::vector<float> t(kSize), y(kSize);
  for (int idx = 0; idx < kSize; ++idx) {
    t[idx] = x_values[idx] * w_values[idx];
    y[idx] = t[idx] + b_values[idx];
  }
  EXPECT_EQ(Values(*plain->Find("y")), y);
  EXPECT_EQ(Values(*marked->Find("t")), t);
  EXPECT_EQ(Values(*marked->Find("y")), y);
}

}  // namespace
}  // namespace convgate::backends
