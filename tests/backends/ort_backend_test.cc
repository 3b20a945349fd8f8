#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "backends/ort_test_fixture.h"
#include "convgate/core/float16.h"
#include "testing/hostile_files.h"

namespace convgate::backends {
namespace {

constexpr char kAddMatMul[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 3] a, float[N, 3] b) => (float[N, 2] y) <float[3, 2] w = {1, 2, 3, 4, 5, 6}>
{
  t = Add(a, b)
  y = MatMul(t, w)
}
)";

TensorMap AddMatMulInputs() {
  TensorMap inputs;
  EXPECT_TRUE(inputs
                  .Insert("a", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2, 3}),
                                                         {1, 2, 3, 4, 5, 6}))
                  .ok());
  EXPECT_TRUE(inputs
                  .Insert("b", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2, 3}),
                                                         {0.5f, -1, 2, 0, 0.25f, -3}))
                  .ok());
  return inputs;
}

TEST_F(OrtTest, NameAndVersion) {
  EXPECT_EQ(backend_->name(), "ort");
  EXPECT_EQ(backend_->version().rfind("1.", 0), 0u) << backend_->version();
  EXPECT_TRUE(backend_->SupportsIntermediates());
}

TEST_F(OrtTest, RunsAddMatMulInFloat32) {
  std::unique_ptr<Model> model = LoadText(kAddMatMul);
  ASSERT_NE(model, nullptr);
  Result<TensorMap> outputs = model->Run(AddMatMulInputs(), {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 1u);
  const Tensor* y = outputs->Find("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->Describe(), "float32[2, 2]");
  // t = a + b = [[1.5, 1, 5], [4, 5.25, 3]]; y = t @ [[1, 2], [3, 4], [5, 6]].
  const std::vector<float> expected = {1.5f + 3 + 25, 3 + 4 + 30, 4 + 15.75f + 15, 8 + 21 + 18};
  EXPECT_EQ(std::vector<float>(y->data<float>().begin(), y->data<float>().end()), expected);
}

TEST_F(OrtTest, RunsFloat16) {
  std::unique_ptr<Model> model = LoadText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float16[3] a, float16[3] b) => (float16[3] c) { c = Add(a, b) }
)");
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  auto half = [](std::vector<float> values) {
    std::vector<uint16_t> bits;
    for (float value : values) bits.push_back(FloatToHalf(value));
    return Tensor::FromVector<uint16_t>(DType::kFloat16, Shape::Of({3}), bits);
  };
  ASSERT_TRUE(inputs.Insert("a", half({1.5f, -2, 65504})).ok());
  ASSERT_TRUE(inputs.Insert("b", half({0.25f, 0.5f, 65504})).ok());
  Result<TensorMap> outputs = model->Run(inputs, {"c"});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const Tensor& c = (*outputs)[0].tensor;
  ASSERT_EQ(c.dtype(), DType::kFloat16);
  EXPECT_EQ(HalfToFloat(c.data<uint16_t>()[0]), 1.75f);
  EXPECT_EQ(HalfToFloat(c.data<uint16_t>()[1]), -1.5f);
  EXPECT_TRUE(std::isinf(HalfToFloat(c.data<uint16_t>()[2])));  // fp16 overflow, as in numpy
}

TEST_F(OrtTest, RunsInt64AndBool) {
  std::unique_ptr<Model> model = LoadText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[3] i, int64[3] j, bool[3] p, bool[3] q) => (int64[3] s, bool[3] r)
{
  s = Add(i, j)
  r = And(p, q)
}
)");
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  const int64_t big = int64_t{1} << 40;
  ASSERT_TRUE(
      inputs.Insert("i", Tensor::FromVector<int64_t>(DType::kInt64, Shape::Of({3}), {1, -2, big}))
          .ok());
  ASSERT_TRUE(
      inputs.Insert("j", Tensor::FromVector<int64_t>(DType::kInt64, Shape::Of({3}), {10, 2, big}))
          .ok());
  ASSERT_TRUE(
      inputs.Insert("p", Tensor::FromVector<uint8_t>(DType::kBool, Shape::Of({3}), {1, 1, 0}))
          .ok());
  ASSERT_TRUE(
      inputs.Insert("q", Tensor::FromVector<uint8_t>(DType::kBool, Shape::Of({3}), {1, 0, 1}))
          .ok());
  Result<TensorMap> outputs = model->Run(inputs, {"r", "s"});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->Names(), (std::vector<std::string>{"r", "s"}));
  const Tensor& r = *outputs->Find("r");
  const Tensor& s = *outputs->Find("s");
  EXPECT_EQ(r.dtype(), DType::kBool);
  EXPECT_EQ(std::vector<uint8_t>(r.data<uint8_t>().begin(), r.data<uint8_t>().end()),
            (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(std::vector<int64_t>(s.data<int64_t>().begin(), s.data<int64_t>().end()),
            (std::vector<int64_t>{11, 0, 2 * big}));
}

TEST_F(OrtTest, SignatureKeepsSymbolicAndUnknownDims) {
  std::unique_ptr<Model> model = LoadText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[batch, 3, ?] x) => (float[batch, 3, ?] y) { y = Relu(x) }
)");
  ASSERT_NE(model, nullptr);
  const Signature& signature = model->signature();
  ASSERT_EQ(signature.inputs.size(), 1u);
  EXPECT_EQ(signature.inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(FormatDims(signature.inputs[0]), "[batch, 3, ?]");
  EXPECT_EQ(signature.inputs[0].shape[0].symbol, "batch");
  ASSERT_EQ(signature.outputs.size(), 1u);
  EXPECT_EQ(FormatDims(signature.outputs[0]), "[batch, 3, ?]");

  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("x", Zeros(DType::kFloat32, Shape::Of({2, 3, 5}))).ok());
  Result<TensorMap> outputs = model->Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ((*outputs)[0].tensor.Describe(), "float32[2, 3, 5]");
}

TEST_F(OrtTest, EmptyTensorsRun) {
  std::unique_ptr<Model> model = LoadText(kAddMatMul);
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("a", Zeros(DType::kFloat32, Shape::Of({0, 3}))).ok());
  ASSERT_TRUE(inputs.Insert("b", Zeros(DType::kFloat32, Shape::Of({0, 3}))).ok());
  Result<TensorMap> outputs = model->Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ((*outputs)[0].tensor.Describe(), "float32[0, 2]");
}

TEST_F(OrtTest, MissingInputNamesTheInputAndTheModel) {
  std::unique_ptr<Model> model = LoadText(kAddMatMul);
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("a", AddMatMulInputs()[0].tensor.Clone()).ok());
  Result<TensorMap> outputs = model->Run(inputs, {});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(outputs.status(), "'b'")) << outputs.status().ToString();
  EXPECT_TRUE(Contains(outputs.status(), PathOf("m.onnx"))) << outputs.status().ToString();
}

TEST_F(OrtTest, WrongDtypeOrShapeOrExtraInputIsRefusedBeforeRunning) {
  std::unique_ptr<Model> model = LoadText(kAddMatMul);
  ASSERT_NE(model, nullptr);
  {
    TensorMap inputs = AddMatMulInputs();
    inputs.InsertOrAssign("b", Zeros(DType::kFloat64, Shape::Of({2, 3})));
    Result<TensorMap> outputs = model->Run(inputs, {});
    ASSERT_FALSE(outputs.ok());
    EXPECT_EQ(outputs.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_TRUE(Contains(outputs.status(),
                         "input 'b' is float64[2, 3], the model wants "
                         "float32[N, 3]"))
        << outputs.status().ToString();
  }
  {
    TensorMap inputs = AddMatMulInputs();
    inputs.InsertOrAssign("b", Zeros(DType::kFloat32, Shape::Of({2, 4})));
    Result<TensorMap> outputs = model->Run(inputs, {});
    ASSERT_FALSE(outputs.ok());
    EXPECT_TRUE(Contains(outputs.status(), "float32[2, 4]")) << outputs.status().ToString();
  }
  {
    TensorMap inputs = AddMatMulInputs();
    ASSERT_TRUE(inputs.Insert("c", Zeros(DType::kFloat32, Shape::Of({1}))).ok());
    Result<TensorMap> outputs = model->Run(inputs, {});
    ASSERT_FALSE(outputs.ok());
    EXPECT_TRUE(Contains(outputs.status(), "'c' is not an input")) << outputs.status().ToString();
  }
}

TEST_F(OrtTest, RuntimeErrorNamesTheModelAndTheNode) {
  onnx::ModelProto proto = testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x, int64[2] shape) => (float[?, ?] y) { y = Reshape(x, shape) }
)");
  proto.mutable_graph()->mutable_node(0)->set_name("reshape_node");
  Result<std::unique_ptr<Model>> model = Load(Write(proto, "reshape.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("x", Zeros(DType::kFloat32, Shape::Of({2, 3}))).ok());
  ASSERT_TRUE(
      inputs.Insert("shape", Tensor::FromVector<int64_t>(DType::kInt64, Shape::Of({2}), {4, 5}))
          .ok());
  Result<TensorMap> outputs = (*model)->Run(inputs, {});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(outputs.status(), PathOf("reshape.onnx"))) << outputs.status().ToString();
  EXPECT_TRUE(Contains(outputs.status(), "reshape_node")) << outputs.status().ToString();
}

// The CPU provider has no bfloat16 kernels, so a bfloat16 model runs emulated: float32 compute,
// each bfloat16 value rounded as stored, inside If bodies as in the main graph (silero VAD's
// bfloat16 conversion computes in its If branches). bfloat16 holds 1000.3 as 1000 (its spacing
// there is 4), so the then-branch's (x + 1000) - 1000 is 0, where float32 would keep 0.3.
TEST_F(OrtTest, Bfloat16IsEmulatedInsideIfBodiesToo) {
  onnx::ModelProto proto = testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x, bool cond) => (float[4] y) <float[1] k32 = {1000.0}> {
  xb = Cast <to = 16> (x)
  kb = Cast <to = 16> (k32)
  out = If <
    then_branch = then_g () => (bfloat16[4] o) {
      t = Add(xb, kb)
      o = Sub(t, kb)
    },
    else_branch = else_g () => (bfloat16[4] o) { o = Identity(xb) }
  > (cond)
  y = Cast <to = 1> (out)
}
)");
  Result<std::unique_ptr<Model>> model = Load(Write(proto, "if_bf16.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  for (const bool cond : {true, false}) {
    TensorMap inputs;
    ASSERT_TRUE(inputs
                    .Insert("x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({4}),
                                                           {0.3f, 1.0f, 2.5f, 3.0f}))
                    .ok());
    ASSERT_TRUE(
        inputs.Insert("cond", Tensor::FromVector<uint8_t>(DType::kBool, Shape::Of({}), {cond}))
            .ok());
    Result<TensorMap> outputs = (*model)->Run(inputs, {});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    const Tensor* y = outputs->Find("y");
    ASSERT_NE(y, nullptr);
    if (cond) {
      // 1000.3 and 1001 round to 1000, 1002.5 and 1003 to 1004 (bfloat16's spacing there is 4).
      const std::vector<double> want = {0.0, 0.0, 4.0, 4.0};
      for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(y->GetDouble(i), want[i]) << i;
    } else {
      EXPECT_EQ(y->GetDouble(0), 0.30078125);  // 0.3 rounded to bfloat16
      EXPECT_EQ(y->GetDouble(2), 2.5);
    }
  }
}

TEST_F(OrtTest, SequenceOutputIsUnimplementedNamingIt) {
  onnx::ModelProto proto = testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] s) { s = SequenceConstruct(x, x) }
)");
  onnx::TypeProto* type = proto.mutable_graph()->mutable_output(0)->mutable_type();
  type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  Result<std::unique_ptr<Model>> model = Load(Write(proto, "seq.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->signature().outputs[0].type_name, "seq(tensor(float))");
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("x", Zeros(DType::kFloat32, Shape::Of({2}))).ok());
  Result<TensorMap> outputs = (*model)->Run(inputs, {});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(outputs.status(), "output 's'")) << outputs.status().ToString();
}

// Issue 10: ONNX Runtime takes names as C strings, so "y\0hidden" would become "y"; the model is
// refused at load (a model problem), not found inconsistent later (an internal error).
TEST_F(OrtTest, NulInANameIsRefusedAtLoadNamingIt) {
  for (const bool output : {false, true}) {
    onnx::ModelProto proto = testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) { y = Identity(x) }
)");
    const std::string name("y\0hidden", 8);
    onnx::GraphProto& graph = *proto.mutable_graph();
    if (output) {
      graph.mutable_output(0)->set_name(name);
      graph.mutable_node(0)->set_output(0, name);
    } else {
      graph.mutable_input(0)->set_name(name);
      graph.mutable_node(0)->set_input(0, name);
    }
    Result<std::unique_ptr<Model>> model = Load(Write(proto, "nul.onnx"));
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.status().code(), StatusCode::kUnimplemented);
    EXPECT_EQ(model.status().message(),
              PathOf("nul.onnx") + ": " + (output ? "output" : "input") +
                  " 0's name contains a NUL byte ('y\\x00hidden'): ONNX Runtime takes names as "
                  "C strings and would truncate it to 'y'; rename it in the model");
  }
}

TEST_F(OrtTest, LoadErrorsNameTheFile) {
  const std::string bytes = testing::Serialize(testing::ParseOnnxText(kAddMatMul));
  std::ofstream(PathOf("cut.onnx"), std::ios::binary) << bytes.substr(0, bytes.size() - 10);
  Result<std::unique_ptr<Model>> truncated = Load(PathOf("cut.onnx"));
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(truncated.status(), PathOf("cut.onnx")));

  Result<std::unique_ptr<Model>> missing = Load(PathOf("absent.onnx"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  // A graph ONNX accepts as a protobuf but ORT cannot build: an op no runtime knows.
  Result<std::unique_ptr<Model>> unknown_op = Load(Write(testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
g (float[2] x) => (float[2] y) { y = com.example.Opaque(x) }
)"),
                                                         "opaque.onnx"));
  ASSERT_FALSE(unknown_op.ok());
  EXPECT_TRUE(Contains(unknown_op.status(), PathOf("opaque.onnx")))
      << unknown_op.status().ToString();
  EXPECT_TRUE(Contains(unknown_op.status(), "Opaque")) << unknown_op.status().ToString();
}

// The ONNX backend test case test_abs, as Debian's libonnx-testdata ships it.
TEST_F(OrtTest, RunsOnnxConformanceCaseAbs) {
  const std::filesystem::path case_dir = "/usr/share/libonnx-testdata/data/node/test_abs";
  if (!std::filesystem::exists(case_dir)) GTEST_SKIP() << "libonnx-testdata is not installed";
  auto read_tensor = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream contents;
    contents << in.rdbuf();
    onnx::TensorProto proto;
    EXPECT_TRUE(proto.ParseFromString(contents.str())) << path;
    EXPECT_EQ(proto.data_type(), onnx::TensorProto::FLOAT) << path;
    std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
    const std::string& raw = proto.raw_data();
    Result<Tensor> tensor =
        Tensor::FromBytes(DType::kFloat32, *Shape::Make(dims),
                          std::span(reinterpret_cast<const std::byte*>(raw.data()), raw.size()));
    EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
    return std::make_pair(proto.name(), std::move(tensor).value());
  };
  Result<std::unique_ptr<Model>> model = Load(case_dir / "model.onnx");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto [input_name, input] = read_tensor(case_dir / "test_data_set_0/input_0.pb");
  auto [output_name, expected] = read_tensor(case_dir / "test_data_set_0/output_0.pb");
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert(input_name, std::move(input)).ok());
  Result<TensorMap> outputs = (*model)->Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const Tensor* actual = outputs->Find(output_name);
  ASSERT_NE(actual, nullptr);
  EXPECT_TRUE(actual->BitwiseEquals(expected)) << actual->Describe();  // abs is exact
}

// Issue 10: a Loop whose trip count is 1e12 ran forever. --run-timeout stops it through ORT's
// run termination flag and says so; a run that finishes in time is not affected.
TEST_F(OrtTest, ARunOverItsTimeoutIsStopped) {
  LoadOptions options{.intra_op_threads = 1};
  options.limits.run_timeout_seconds = 0.5;
  Result<std::unique_ptr<Model>> model =
      backend_->Load(Write(testing::ParseOnnxText(testing::kEndlessLoop), "loop.onnx"), options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("x", Zeros(DType::kFloat32, Shape::Of({1}))).ok());
  const auto start = std::chrono::steady_clock::now();
  Result<TensorMap> outputs = (*model)->Run(inputs, {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(outputs.status().message(),
            PathOf("loop.onnx") +
                ": timed out after 0.5 s (--run-timeout); ONNX Runtime stopped the run");
  EXPECT_LT(seconds, 10.0);

  options.limits.run_timeout_seconds = 60;
  Result<std::unique_ptr<Model>> quick =
      backend_->Load(Write(testing::ParseOnnxText(kAddMatMul), "quick.onnx"), options);
  ASSERT_TRUE(quick.ok()) << quick.status().ToString();
  EXPECT_TRUE((*quick)->Run(AddMatMulInputs(), {}).ok());
}

}  // namespace
}  // namespace convgate::backends
