// The float16 conversion on small models: what becomes float16, what stays float32, where Casts
// go, subgraphs, and values float16 cannot hold.
#include "convert/fp16.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>

#include "convert/convert_test_util.h"
#include "convgate/convert/kinds.h"
#include "convgate/core/float16.h"
#include "convgate/graph/internal/external_data.h"
#include "graph/onnx_test_util.h"

namespace convgate::convert {
namespace {

using onnx::TensorProto;
using testing::ElemTypeOf;
using testing::ParseOnnxText;

constexpr char kMlp[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] x) => (float[1, 3] y) {
  w = Constant <value = float[4, 3] {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2}> ()
  h = MatMul(x, w)
  y = Relu(h)
}
)";

// A float initializer `name` of `values`, added to the main graph.
void AddInitializer(onnx::ModelProto& model, const std::string& name, std::vector<float> values) {
  TensorProto* tensor = model.mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(TensorProto::FLOAT);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  tensor->set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
}

std::vector<uint16_t> HalfBits(const TensorProto& tensor) {
  std::vector<uint16_t> bits(tensor.raw_data().size() / 2);
  std::memcpy(bits.data(), tensor.raw_data().data(), bits.size() * 2);
  return bits;
}

const onnx::NodeProto* FindNode(const onnx::GraphProto& graph, const std::string& op,
                                const std::string& output) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == op && node.output(0) == output) return &node;
  }
  return nullptr;
}

int64_t CastTo(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == "to") return attr.i();
  }
  return -1;
}

TEST(Fp16Test, ConvertsConstantsAndKeepsFloatInputsAndOutputsBehindCasts) {
  onnx::ModelProto model = ParseOnnxText(kMlp);
  Result<Fp16Report> report = ConvertModelToFloat16(model, Fp16Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const onnx::GraphProto& graph = model.graph();
  EXPECT_EQ(report->converted_tensors, 1);
  EXPECT_EQ(graph.input(0).type().tensor_type().elem_type(), TensorProto::FLOAT);
  EXPECT_EQ(graph.output(0).type().tensor_type().elem_type(), TensorProto::FLOAT);
  // Cast to float16 first, Cast back to float32 last, the graph's own nodes in between.
  ASSERT_EQ(graph.node_size(), 5);
  EXPECT_EQ(graph.node(0).op_type(), "Cast");
  EXPECT_EQ(graph.node(0).input(0), "x");
  EXPECT_EQ(CastTo(graph.node(0)), TensorProto::FLOAT16);
  EXPECT_EQ(graph.node(4).op_type(), "Cast");
  EXPECT_EQ(graph.node(4).output(0), "y");
  EXPECT_EQ(CastTo(graph.node(4)), TensorProto::FLOAT);
  const TensorProto& weight = graph.node(1).attribute(0).t();
  EXPECT_EQ(weight.data_type(), TensorProto::FLOAT16);
  EXPECT_EQ(HalfBits(weight).front(), FloatToHalf(0.1f));
  EXPECT_EQ(graph.node(2).input(0), graph.node(0).output(0));  // MatMul reads the cast input
}

// A model newer than libonnx's checker (opset 18, what optimum and torch's exporters write: here
// ReduceMean with its axes as an input, which opset 17's schema refuses) converts, with a note that
// the checks were skipped; ONNX Runtime's load of the result is the check.
TEST(Fp16Test, AModelNewerThanTheCheckerConvertsWithANote) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 4] x) => (float[2, 1] y) {
  axes = Constant <value = int64[1] {1}> ()
  y = ReduceMean <keepdims = 1> (x, axes)
}
)");
  Result<Fp16Report> report = ConvertModelToFloat16(model, Fp16Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_FALSE(report->notes.empty());
  EXPECT_NE(report->notes.back().find("opset 18 of domain '' (the checker knows up to 17)"),
            std::string::npos)
      << report->notes.back();
}

TEST(Fp16Test, WithoutKeepIoTypesTheGraphTakesAndReturnsFloat16) {
  onnx::ModelProto model = ParseOnnxText(kMlp);
  Fp16Options options;
  options.keep_io_types = false;
  ASSERT_TRUE(ConvertModelToFloat16(model, options).ok());
  EXPECT_EQ(model.graph().input(0).type().tensor_type().elem_type(), TensorProto::FLOAT16);
  EXPECT_EQ(model.graph().output(0).type().tensor_type().elem_type(), TensorProto::FLOAT16);
  for (const onnx::NodeProto& node : model.graph().node()) EXPECT_NE(node.op_type(), "Cast");
}

TEST(Fp16Test, ValuesOutsideTheFloat16RangeAreReportedAndBecomeInfinity) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3] x) => (float[3] y) { y = Mul(x, big) }
)");
  AddInitializer(model, "big", {1e6f, -70000.0f, 1.5f});
  Result<Fp16Report> report = ConvertModelToFloat16(model, Fp16Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->range.overflow_values, 2);
  EXPECT_EQ(report->range.largest_overflow, 1e6);
  EXPECT_EQ(report->range.largest_overflow_tensor, "initializer 'big'");
  EXPECT_EQ(HalfBits(model.graph().initializer(0)),
            (std::vector<uint16_t>{0x7c00, 0xfc00, FloatToHalf(1.5f)}));  // +inf, -inf, 1.5
  std::string notes;
  for (const std::string& note : report->notes) notes += note + "\n";
  EXPECT_NE(notes.find("2 value(s) in 1 tensor(s) are outside float16's range"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("the largest is 1e+06 in initializer 'big'"), std::string::npos) << notes;
  EXPECT_NE(notes.find("pass clamp=1"), std::string::npos) << notes;
}

TEST(Fp16Test, ClampingIsOnlyOnRequest) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) { y = Mul(x, big) }
)");
  AddInitializer(model, "big", {1e6f, -1e6f});
  Fp16Options options;
  options.clamp = true;
  Result<Fp16Report> report = ConvertModelToFloat16(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(HalfBits(model.graph().initializer(0)), (std::vector<uint16_t>{0x7bff, 0xfbff}));
  EXPECT_EQ(report->range.overflow_values, 2);
  EXPECT_NE(report->notes.back().find("clamped to +-65504 (clamp=1)"), std::string::npos);
}

TEST(Fp16Test, TinyValuesFlushedToZeroAreReported) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3] x) => (float[3] y) { y = Add(x, tiny) }
)");
  AddInitializer(model, "tiny", {1e-9f, -1e-10f, 1e-3f});
  Result<Fp16Report> report = ConvertModelToFloat16(model, Fp16Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->range.flushed_values, 2);
  EXPECT_EQ(report->range.overflow_values, 0);
  EXPECT_NE(report->notes.back().find("2 nonzero value(s) in 1 tensor(s) are too small"),
            std::string::npos)
      << report->notes.back();
}

constexpr char kIfModel[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  limit = Constant <value = float {100.0}> ()
  m = ReduceMax <keepdims = 0> (x)
  cond = Less(m, limit)
  y = If (cond) <
    then_branch = then_g () => (float[2] t) {
      c = Constant <value = float[2] {2.0, 3.0}> ()
      t = Mul(x, c)
    },
    else_branch = else_g () => (float[2] e) { e = Identity(x) }
  >
}
)";

TEST(Fp16Test, ConstantsInsideIfBranchesAreConvertedAndTheModelRuns) {
  testing::ScopedTempDir dir;
  onnx::ModelProto model = ParseOnnxText(kIfModel);
  testing::WriteModel(model, dir.path() / "fp32.onnx");
  Result<Fp16Report> report = ConvertModelToFloat16(model, Fp16Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->converted_tensors, 2);  // limit and the Constant in then_branch
  const onnx::NodeProto* if_node = FindNode(model.graph(), "If", "graph_output_cast_0");
  ASSERT_NE(if_node, nullptr);
  const onnx::GraphProto& then_branch = if_node->attribute(0).g();
  EXPECT_EQ(then_branch.node(0).attribute(0).t().data_type(), TensorProto::FLOAT16);
  EXPECT_EQ(then_branch.output(0).type().tensor_type().elem_type(), TensorProto::FLOAT16);
  testing::WriteModel(model, dir.path() / "fp16.onnx");
#if CONVGATE_WITH_ONNXRUNTIME
  Result<TensorMap> expected = testing::RunInOrt(dir.path() / "fp32.onnx");
  Result<TensorMap> actual = testing::RunInOrt(dir.path() / "fp16.onnx");
  ASSERT_TRUE(expected.ok() && actual.ok()) << actual.status().ToString();
  EXPECT_LT(testing::MaxAbsDiff((*expected)[0].tensor, (*actual)[0].tensor), 1e-2);
#endif
}

TEST(Fp16Test, ABlockedNodeStaysFloat32BetweenCasts) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] x) => (float[1, 4] y) {
  a = Relu(x)
  b = Sigmoid(a)
  y = Relu(b)
}
)");
  model.mutable_graph()->mutable_node(1)->set_name("keep_me");
  Fp16Options options;
  options.node_block_list = {"keep_me"};
  Result<Fp16Report> report = ConvertModelToFloat16(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->blocked_nodes, 1);
  const onnx::GraphProto& graph = model.graph();
  // x -> Cast16 -> Relu -> Cast32 -> Sigmoid -> Cast16 -> Relu -> Cast32 -> y
  std::vector<std::string> ops;
  for (const onnx::NodeProto& node : graph.node()) ops.push_back(node.op_type());
  EXPECT_EQ(ops,
            (std::vector<std::string>{"Cast", "Relu", "Cast", "Sigmoid", "Cast", "Relu", "Cast"}));
  const onnx::NodeProto& sigmoid = graph.node(3);
  EXPECT_EQ(CastTo(graph.node(2)), TensorProto::FLOAT);
  EXPECT_EQ(graph.node(2).output(0), sigmoid.input(0));
  EXPECT_EQ(ElemTypeOf(graph, sigmoid.input(0)), TensorProto::FLOAT);
  EXPECT_EQ(ElemTypeOf(graph, sigmoid.output(0)), TensorProto::FLOAT);
  EXPECT_EQ(CastTo(graph.node(4)), TensorProto::FLOAT16);
  EXPECT_EQ(graph.node(4).input(0), sigmoid.output(0));
  EXPECT_EQ(graph.node(4).output(0), "b");
  EXPECT_EQ(ElemTypeOf(graph, "b"), 0);  // no declaration, inferred as float16 by runtimes
}

TEST(Fp16Test, OpBlockListKeepsEveryNodeOfThatOp) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] x) => (float[1, 4] y) { a = Softmax(x)  y = Softmax(a) }
)");
  Result<Fp16Options> options = ParseFp16Params({{"op_block_list", "Softmax"}});
  ASSERT_TRUE(options.ok());
  Result<Fp16Report> report = ConvertModelToFloat16(model, *options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->blocked_nodes, 2);
  EXPECT_EQ(report->blocked_ops.at("Softmax"), 2);
}

TEST(Fp16Test, ConstantValueFloatAndCastToFloatBecomeFloat16) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, int64[2] n) => (float[2] y) {
  s = Constant <value_float = 0.5> ()
  f = Cast <to = 1> (n)
  a = Mul(x, s)
  y = Add(a, f)
}
)");
  ASSERT_TRUE(ConvertModelToFloat16(model, Fp16Options()).ok());
  const onnx::NodeProto* constant = FindNode(model.graph(), "Constant", "s");
  ASSERT_NE(constant, nullptr);
  EXPECT_EQ(constant->attribute(0).name(), "value");
  EXPECT_EQ(constant->attribute(0).t().data_type(), TensorProto::FLOAT16);
  const onnx::NodeProto* cast = FindNode(model.graph(), "Cast", "f");
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(CastTo(*cast), TensorProto::FLOAT16);
  EXPECT_EQ(model.graph().input(1).type().tensor_type().elem_type(), TensorProto::INT64);
}

TEST(Fp16Test, ParametersAreCheckedByName) {
  Result<Fp16Options> defaults = ParseFp16Params({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->keep_io_types);
  EXPECT_FALSE(defaults->clamp);
  EXPECT_EQ(defaults->op_block_list.count("Resize"), 1u);
  Result<Fp16Options> parsed = ParseFp16Params({{"keep_io_types", "0"},
                                                {"clamp", "1"},
                                                {"op_block_list", "none"},
                                                {"node_block_list", "a, b"}});
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->keep_io_types);
  EXPECT_TRUE(parsed->clamp);
  EXPECT_TRUE(parsed->op_block_list.empty());
  EXPECT_EQ(parsed->node_block_list, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(ParseFp16Params({{"clamp", "maybe"}}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Fp16Test, UnknownParametersAreRefusedBeforeConverting) {
  ConversionRequest request;
  request.kind = "fp16";
  request.params = {{"keep_io", "1"}};
  Status unknown = CheckConversionRequest(request);
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("unknown parameter 'keep_io'"), std::string::npos);
  EXPECT_NE(unknown.message().find("keep_io_types"), std::string::npos) << unknown.message();
}

TEST(Fp16Test, AnOpBlockListAddsToTheDefaultList) {
  // Bug: op_block_list=Conv replaced the default list, so the conversion then failed on the ops
  // the default keeps in float32 (Resize, NonMaxSuppression, ...).
  Result<Fp16Options> added = ParseFp16Params({{"op_block_list", "Conv"}});
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(added->op_block_list.count("Conv"), 1u);
  EXPECT_EQ(added->op_block_list.count("Resize"), 1u);
  EXPECT_EQ(added->op_block_list.size(), DefaultFp16OpBlockList().size() + 1);
  Result<Fp16Options> removed = ParseFp16Params({{"op_block_list", "-Resize,Conv"}});
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->op_block_list.count("Resize"), 0u);
  EXPECT_EQ(removed->op_block_list.count("Conv"), 1u);
}

// bfloat16 exists in ONNX from opset 13: an older model is refused with the way forward, and a
// Conv (no bfloat16 form before opset 22) stays float32, counted as such.
TEST(Fp16Test, Bfloat16NeedsOpset13AndKeepsOpsWithoutABfloat16FormInFloat32) {
  onnx::ModelProto old = ParseOnnxText(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[1, 4] x) => (float[1, 4] y) { y = Relu(x) }
)");
  Fp16Options bf16;
  bf16.half_type = TensorProto::BFLOAT16;
  Result<Fp16Report> refused = ConvertModelToFloat16(old, bf16);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("--to opset:13"), std::string::npos)
      << refused.status().message();
  onnx::ModelProto conv = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 4, 4] x) => (float[1, 1, 4, 4] y) {
  w = Constant <value = float[1, 1, 1, 1] {2.0}> ()
  c = Conv (x, w)
  y = Relu (c)
}
)");
  Result<Fp16Report> report = ConvertModelToFloat16(conv, bf16);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->no_half_form_ops, (std::map<std::string, int64_t>{{"Conv", 1}}));
  EXPECT_EQ(report->blocked_ops, (std::map<std::string, int64_t>{{"Conv", 1}}));
  bool output_float32 = false;
  for (const onnx::ValueInfoProto& value : conv.graph().output()) {
    output_float32 = output_float32 || value.type().tensor_type().elem_type() == TensorProto::FLOAT;
  }
  EXPECT_TRUE(output_float32);  // keep_io_types: the output stays float32 behind a Cast
}

// A weight in a data file is read when its turn comes, converted, and handed to the sink (the
// converter's writer) at once: the converted weights are never all held.
TEST(Fp16Test, ExternalWeightsAreReadConvertedAndStreamedOneAtATime) {
  testing::ScopedTempDir dir;
  const std::vector<float> values = {0.5f, -2.0f, 1e5f, 3.0f};
  std::ofstream(dir.path() / "w.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()), sizeof(float) * values.size());
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2] x) => (float[1, 2] y) { y = MatMul(x, far) }
)");
  TensorProto* tensor = model.mutable_graph()->add_initializer();
  tensor->set_name("far");
  tensor->set_data_type(TensorProto::FLOAT);
  tensor->add_dims(2);
  tensor->add_dims(2);
  tensor->set_data_location(TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = tensor->add_external_data();
  location->set_key("location");
  location->set_value("w.bin");
  // Unanchored, a location means nothing: refused, naming the tensor.
  onnx::ModelProto unanchored = model;
  Result<Fp16Report> refused = ConvertModelToFloat16(unanchored, Fp16Options());
  EXPECT_NE(refused.status().message().find("initializer 'far'"), std::string::npos)
      << refused.status().message();
  ASSERT_TRUE(graph::AnchorExternalData(model, dir.path() / "model.onnx").ok());
  Fp16Options options;
  std::vector<std::string> streamed;
  options.converted_sink = [&](TensorProto& converted) {
    EXPECT_EQ(converted.data_type(), TensorProto::FLOAT16);
    EXPECT_EQ(converted.raw_data().size(), 8u);
    streamed.push_back(converted.name());
    return Status::OK();
  };
  Result<Fp16Report> report = ConvertModelToFloat16(model, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(streamed, std::vector<std::string>{"far"});
  EXPECT_EQ(report->range.overflow_values, 1);  // 1e5 is read from the file too
  const std::string& half = model.graph().initializer(0).raw_data();
  uint16_t second = 0;
  std::memcpy(&second, half.data() + 2, 2);
  EXPECT_EQ(HalfToFloat(second), -2.0f);
}

}  // namespace
}  // namespace convgate::convert
