// The float16 conversion against ONNX Runtime's CPU kernels: one model per op, converted with the
// default op block list, must load and run in ONNX Runtime and stay close to the float32 model.
// The ops of the default block list are also converted without it, to show each one is there
// for a reason (ONNX Runtime 1.29 rejects the float16 version).
#include <gtest/gtest.h>
#include <onnx/shape_inference/implementation.h>

#include "convert/convert_test_util.h"
#include "convert/fp16.h"
#include "graph/onnx_test_util.h"

namespace convgate::convert {
namespace {

using testing::FloatLiteral;

struct OpCase {
  std::string name;
  std::string signature;  // "(float[2, 4] x) => (float y)"
  std::string body;
  int opset = 17;
};

const std::string kX = "(float[2, 4] x) => (float y)";
const std::string kImage = "(float[1, 3, 8, 8] x) => (float y)";

std::vector<OpCase> SupportedCases() {
  return {
      {"Relu", kX, "y = Relu(x)"},
      {"Sigmoid", kX, "y = Sigmoid(x)"},
      {"Tanh", kX, "y = Tanh(x)"},
      {"Exp", kX, "y = Exp(x)"},
      {"Log", kX, "y = Log(x)"},
      {"Sqrt", kX, "y = Sqrt(x)"},
      {"Erf", kX, "y = Erf(x)"},
      {"Softplus", kX, "y = Softplus(x)"},
      {"Reciprocal", kX, "y = Reciprocal(x)"},
      {"LeakyRelu", kX, "y = LeakyRelu <alpha = 0.1> (x)"},
      {"HardSigmoid", kX, "y = HardSigmoid(x)"},
      {"Softmax", kX, "y = Softmax <axis = 1> (x)"},
      {"LogSoftmax", kX, "y = LogSoftmax <axis = 1> (x)"},
      {"ReduceMean", kX, "y = ReduceMean <axes = [1]> (x)"},
      {"ReduceMax", kX, "y = ReduceMax <axes = [1]> (x)"},
      {"ReduceSum", kX, "a = Constant <value = int64[1] {1}> ()\n y = ReduceSum(x, a)"},
      {"ArgMax", kX, "i = ArgMax <axis = 1> (x)\n y = Cast <to = 1> (i)"},
      {"Add", kX, "c = Constant <value = float[4] " + FloatLiteral(4) + "> ()\n y = Add(x, c)"},
      {"Mul", kX, "y = Mul(x, x)"},
      {"Div", kX, "y = Div(x, x)"},
      {"Pow", kX, "c = Constant <value = float {2.0}> ()\n y = Pow(x, c)"},
      {"MatMul", kX,
       "w = Constant <value = float[4, 3] " + FloatLiteral(12) + "> ()\n y = MatMul(x, w)"},
      {"Gemm", kX,
       "w = Constant <value = float[3, 4] " + FloatLiteral(12) +
           "> ()\n"
           " b = Constant <value = float[3] " +
           FloatLiteral(3) +
           "> ()\n"
           " y = Gemm <transB = 1> (x, w, b)"},
      {"Conv", kImage,
       "w = Constant <value = float[2, 3, 3, 3] " + FloatLiteral(54) +
           "> ()\n"
           " y = Conv <pads = [1, 1, 1, 1]> (x, w)"},
      {"ConvTranspose", kImage,
       "w = Constant <value = float[3, 2, 2, 2] " + FloatLiteral(24) +
           "> ()\n"
           " y = ConvTranspose <strides = [2, 2]> (x, w)"},
      {"MaxPool", kImage, "y = MaxPool <kernel_shape = [2, 2]> (x)"},
      {"AveragePool", kImage, "y = AveragePool <kernel_shape = [2, 2]> (x)"},
      {"GlobalAveragePool", kImage, "y = GlobalAveragePool(x)"},
      {"BatchNormalization", kImage,
       "s = Constant <value = float[3] " + FloatLiteral(3, 0.5f, 1.5f) +
           "> ()\n"
           " b = Constant <value = float[3] " +
           FloatLiteral(3) +
           "> ()\n"
           " m = Constant <value = float[3] " +
           FloatLiteral(3) +
           "> ()\n"
           " v = Constant <value = float[3] " +
           FloatLiteral(3, 0.5f, 1.5f) +
           "> ()\n"
           " y = BatchNormalization(x, s, b, m, v)"},
      {"InstanceNormalization", kImage,
       "s = Constant <value = float[3] " + FloatLiteral(3, 0.5f, 1.5f) +
           "> ()\n"
           " b = Constant <value = float[3] " +
           FloatLiteral(3) +
           "> ()\n"
           " y = InstanceNormalization(x, s, b)"},
      {"LayerNormalization", kX,
       "s = Constant <value = float[4] " + FloatLiteral(4, 0.5f, 1.5f) +
           "> ()\n"
           " b = Constant <value = float[4] " +
           FloatLiteral(4) +
           "> ()\n"
           " y = LayerNormalization <axis = -1> (x, s, b)"},
      {"Clip", kX,
       "lo = Constant <value = float {0.2}> ()\n hi = Constant <value = float {0.8}> ()\n"
       " y = Clip(x, lo, hi)"},
      {"Where", kX,
       "h = Constant <value = float {0.5}> ()\n c = Greater(x, h)\n y = Where(c, x, h)"},
      {"Transpose", kX, "y = Transpose <perm = [1, 0]> (x)"},
      {"Concat", kX, "y = Concat <axis = 0> (x, x)"},
      {"Pad", kX,
       "p = Constant <value = int64[4] {0, 1, 0, 1}> ()\n v = Constant <value = float {0.5}> ()\n"
       " y = Pad(x, p, v)"},
      {"Cast", kX, "i = Cast <to = 6> (x)\n y = Cast <to = 1> (i)"},
      {"TopK", kX, "k = Constant <value = int64[1] {2}> ()\n y, i = TopK <axis = 1> (x, k)"},
      {"CumSum", kX, "a = Constant <value = int64 {1}> ()\n y = CumSum(x, a)"},
      {"Min", kX, "c = Constant <value = float {0.5}> ()\n y = Min(x, c)"},
      {"Max", kX, "c = Constant <value = float {0.5}> ()\n y = Max(x, c)"},
      {"RoiAlign", "(float[1, 3, 8, 8] x) => (float y)",
       "r = Constant <value = float[1, 4] {0.0, 0.0, 4.0, 4.0}> ()\n"
       " b = Constant <value = int64[1] {0}> ()\n"
       " y = RoiAlign <output_height = 2, output_width = 2> (x, r, b)"},
      {"ConstantOfShape", kX, "s = Shape(x)\n z = ConstantOfShape(s)\n y = Add(x, z)"},
  };
}

// The default block list's ops, in graphs where the op sees float16 when it is not blocked.
std::vector<OpCase> BlockedCases() {
  return {
      {"Resize", "(float[1, 3, 4, 4] x) => (float y)",
       "r = Constant <value = float[0] {}> ()\n"
       " s = Constant <value = float[4] {1.0, 1.0, 2.0, 2.0}> ()\n"
       " y = Resize <mode = \"nearest\"> (x, r, s)"},
      {"Range", kX,
       "s = Constant <value = float {0.0}> ()\n l = Constant <value = float {4.0}> ()\n"
       " d = Constant <value = float {0.5}> ()\n r = Range(s, l, d)\n m = ReduceMax(x)\n"
       " y = Mul(r, m)"},
      {"NonMaxSuppression", "(float[1, 4, 4] boxes, float[1, 1, 4] scores) => (float y)",
       "n = Constant <value = int64[1] {2}> ()\n iou = Constant <value = float[1] {0.5}> ()\n"
       " t = Constant <value = float[1] {0.0}> ()\n"
       " k = NonMaxSuppression(boxes, scores, n, iou, t)\n y = Cast <to = 1> (k)"},
      // Upsample exists up to opset 9 (deprecated at 10).
      {"Upsample", "(float[1, 3, 4, 4] x) => (float y)",
       "s = Constant <value = float[4] {1.0, 1.0, 2.0, 2.0}> ()\n"
       " y = Upsample <mode = \"nearest\"> (x, s)",
       9},
  };
}

// ONNX text declares `float y` as a scalar; the outputs' shapes come from shape inference.
onnx::ModelProto Model(const OpCase& op_case) {
  onnx::ModelProto model = testing::ParseOnnxText(
      "<ir_version: 8, opset_import: [\"\" : " + std::to_string(op_case.opset) + "]>\ng " +
      op_case.signature + " {\n " + op_case.body + "\n}");
  for (onnx::ValueInfoProto& output : *model.mutable_graph()->mutable_output()) {
    output.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  onnx::shape_inference::InferShapes(model);  // fills in the outputs' shapes
  model.mutable_graph()->clear_value_info();
  return model;
}

// Converts `op_case` with `options` and runs both models; "" when the float16 model runs and
// agrees with the float32 one within 2e-2, else what went wrong.
std::string ConvertAndRun(const OpCase& op_case, const Fp16Options& options) {
  testing::ScopedTempDir dir;
  onnx::ModelProto model = Model(op_case);
  testing::WriteModel(model, dir.path() / "fp32.onnx");
  Result<Fp16Report> report = ConvertModelToFloat16(model, options);
  if (!report.ok()) return "conversion: " + report.status().ToString();
  testing::WriteModel(model, dir.path() / "fp16.onnx");
  Result<TensorMap> expected = testing::RunInOrt(dir.path() / "fp32.onnx");
  if (!expected.ok()) return "float32 model: " + expected.status().ToString();
  Result<TensorMap> actual = testing::RunInOrt(dir.path() / "fp16.onnx");
  if (!actual.ok()) return "float16 model: " + actual.status().ToString();
  const double diff = testing::MaxAbsDiff((*expected)[0].tensor, (*actual)[0].tensor);
  // float16 keeps ~3 decimal digits; these outputs are of order 1, and a few ops in a row.
  if (!(diff <= 2e-2)) return "outputs differ by " + std::to_string(diff);
  return "";
}

class Fp16OrtTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !CONVGATE_WITH_ONNXRUNTIME
    GTEST_SKIP() << "built without ONNX Runtime";
#endif
  }
};

TEST_F(Fp16OrtTest, EveryOpRunsAfterConversionWithTheDefaultBlockList) {
  std::vector<OpCase> cases = SupportedCases();
  for (OpCase& blocked : BlockedCases()) cases.push_back(std::move(blocked));
  for (const OpCase& op_case : cases) {
    EXPECT_EQ(ConvertAndRun(op_case, Fp16Options()), "") << op_case.name;
  }
}

TEST_F(Fp16OrtTest, SupportedOpsRunWithNoBlockListAtAll) {
  Fp16Options options;
  options.op_block_list.clear();
  for (const OpCase& op_case : SupportedCases()) {
    EXPECT_EQ(ConvertAndRun(op_case, options), "") << op_case.name;
  }
}

TEST_F(Fp16OrtTest, EachDefaultBlockedOpFailsWhenNotBlocked) {
  Fp16Options options;
  options.op_block_list.clear();
  for (const OpCase& op_case : BlockedCases()) {
    EXPECT_NE(ConvertAndRun(op_case, options), "") << op_case.name << " runs in float16";
  }
}

}  // namespace
}  // namespace convgate::convert
