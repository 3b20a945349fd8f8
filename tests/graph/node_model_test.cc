// SingleNodeModel (one node cut out as a standalone model) and InferValueBytes (value sizes for
// per-node validation's memory plan).
#include "convgate/graph/node_model.h"

#include <gtest/gtest.h>

#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"
#include "convgate/graph/nodes.h"
#include "graph/onnx_test_util.h"

namespace convgate::graph {
namespace {

using ::convgate::testing::ParseOnnxText;
using ::convgate::testing::Serialize;

constexpr char kChainModel[] = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[N, 2] x) => (float[N, 2] y) <float[2] w = {1.0, 2.0}>
{
  t = Add(x, w)
  u = Relu(t)
  y = Mul(u, w)
}
)";

onnx::ModelProto Parse(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

TensorMap Feeds(const std::string& name, std::initializer_list<int64_t> dims) {
  TensorMap feeds;
  EXPECT_TRUE(
      feeds.Insert(name, std::move(Tensor::Allocate(DType::kFloat32, Shape::Of(dims))).value())
          .ok());
  return feeds;
}

TEST(SingleNodeModel, FedInputsBecomeTypedInputsInitializersStay) {
  const std::string bytes = Serialize(ParseOnnxText(kChainModel));
  Result<std::string> single = SingleNodeModel(bytes, 2, Feeds("u", {3, 2}), "chain.onnx");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  const onnx::ModelProto model = Parse(*single);
  ASSERT_EQ(model.graph().node_size(), 1);
  EXPECT_EQ(model.graph().node(0).op_type(), "Mul");
  ASSERT_EQ(model.graph().input_size(), 1);
  EXPECT_EQ(model.graph().input(0).name(), "u");
  const auto& shape = model.graph().input(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 2);
  EXPECT_EQ(shape.dim(0).dim_value(), 3);
  ASSERT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(model.graph().initializer(0).name(), "w");
  ASSERT_EQ(model.graph().output_size(), 1);
  EXPECT_EQ(model.graph().output(0).name(), "y");
  EXPECT_EQ(model.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(model.opset_import(0).version(), 15);
}

TEST(SingleNodeModel, AFedTensorReplacesAnInitializerOfTheSameName) {
  const std::string bytes = Serialize(ParseOnnxText(kChainModel));
  TensorMap feeds = Feeds("x", {1, 2});
  ASSERT_TRUE(
      feeds.Insert("w", std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({2}))).value()).ok());
  const onnx::ModelProto model = Parse(*SingleNodeModel(bytes, 0, feeds, "chain.onnx"));
  EXPECT_EQ(model.graph().input_size(), 2);
  EXPECT_EQ(model.graph().initializer_size(), 0);
}

TEST(SingleNodeModel, ErrorsNameTheModelAndTheProblem) {
  const std::string bytes = Serialize(ParseOnnxText(kChainModel));
  Result<std::string> missing = SingleNodeModel(bytes, 1, TensorMap{}, "chain.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("chain.onnx"), std::string::npos);
  EXPECT_NE(missing.status().message().find("'t'"), std::string::npos);
  Result<std::string> index = SingleNodeModel(bytes, 7, TensorMap{}, "chain.onnx");
  EXPECT_EQ(index.status().code(), StatusCode::kInvalidArgument);
  Result<std::string> garbage = SingleNodeModel("not a model", 0, TensorMap{}, "bad.onnx");
  EXPECT_EQ(garbage.status().code(), StatusCode::kDataLoss);
}

// The chain model in a file, as NodeModelCutter reads it.
struct ChainFile {
  TempDir dir = std::move(TempDir::Create("node-model-test")).value();
  std::filesystem::path path = dir.path() / "chain.onnx";
  ChainFile() { EXPECT_TRUE(WriteFileAtomic(path, Serialize(ParseOnnxText(kChainModel))).ok()); }
};

std::vector<std::string> Names(const auto& values) {
  std::vector<std::string> names;
  for (const auto& value : values) names.push_back(value.name());
  return names;
}

TEST(CutSideBySide, EachCopyKeepsItsInputsAndRenamesItsOutputs) {
  ChainFile file;
  Result<NodeModelCutter> cutter = NodeModelCutter::Open(file.path);
  ASSERT_TRUE(cutter.ok()) << cutter.status().ToString();
  // Relu's output u feeds Mul, yet both run alone: u is fed, and Relu's copy writes a renamed u.
  TensorMap feeds = Feeds("t", {3, 2});
  ASSERT_TRUE(
      feeds.Insert("u", std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({3, 2}))).value())
          .ok());
  Result<std::string> cut = cutter->CutSideBySide({{1}, {2}, {1}}, feeds);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  const onnx::ModelProto model = Parse(*cut);
  ASSERT_EQ(model.graph().node_size(), 3);
  EXPECT_EQ(model.graph().node(0).op_type(), "Relu");
  EXPECT_EQ(model.graph().node(1).op_type(), "Mul");
  EXPECT_EQ(model.graph().node(1).input(0), "u");  // the fed u, not the copy's output
  EXPECT_EQ(Names(model.graph().input()), (std::vector<std::string>{"t", "u"}));
  EXPECT_EQ(Names(model.graph().initializer()), (std::vector<std::string>{"w"}));
  EXPECT_EQ(Names(model.graph().output()),
            (std::vector<std::string>{SideBySideOutputName(0, "u"), SideBySideOutputName(1, "y"),
                                      SideBySideOutputName(2, "u")}));
  for (const onnx::ValueInfoProto& output : model.graph().output()) {
    EXPECT_EQ(output.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT) << output.name();
    EXPECT_EQ(output.type().tensor_type().shape().dim(0).dim_value(), 3) << output.name();
  }
  // Each copy alone is what Cut gives for its node, outputs renamed.
  const onnx::ModelProto alone = Parse(*cutter->Cut({2}, feeds));
  EXPECT_EQ(alone.graph().node(0).SerializeAsString(), [&] {
    onnx::NodeProto copy = model.graph().node(1);
    copy.clear_name();  // the chain's nodes have none; the copy's is made up
    if (alone.graph().node(0).has_name()) copy.set_name(alone.graph().node(0).name());
    *copy.mutable_output(0) = alone.graph().node(0).output(0);
    return copy.SerializeAsString();
  }());
}

TEST(CutSideBySide, ErrorsAreCutsErrorsNamingTheModel) {
  ChainFile file;
  Result<NodeModelCutter> cutter = NodeModelCutter::Open(file.path);
  ASSERT_TRUE(cutter.ok());
  Result<std::string> missing = cutter->CutSideBySide({{0}, {1}}, Feeds("x", {1, 2}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("chain.onnx"), std::string::npos);
  EXPECT_NE(missing.status().message().find("'t'"), std::string::npos);
  EXPECT_EQ(cutter->CutSideBySide({{0}, {9}}, Feeds("x", {1, 2})).status().code(),
            StatusCode::kInvalidArgument);
}

// A quantized layer is cut as one unit: the values its nodes pass each other stay inside it.
TEST(NodeModelCutter, AUnitKeepsItsInternalValuesAndIsFedTheRest) {
  ChainFile file;
  Result<NodeModelCutter> cutter = NodeModelCutter::Open(file.path);
  ASSERT_TRUE(cutter.ok());
  const onnx::ModelProto unit = Parse(*cutter->Cut({1, 2}, Feeds("t", {3, 2})));
  ASSERT_EQ(unit.graph().node_size(), 2);
  EXPECT_EQ(Names(unit.graph().input()), (std::vector<std::string>{"t"}));  // u is produced
  EXPECT_EQ(Names(unit.graph().output()), (std::vector<std::string>{"u", "y"}));
  // Side by side, a copy's internal value is renamed with its outputs, so copies stay apart.
  const onnx::ModelProto both = Parse(*cutter->CutSideBySide({{1, 2}, {1, 2}}, Feeds("t", {3, 2})));
  ASSERT_EQ(both.graph().node_size(), 4);
  EXPECT_EQ(both.graph().node(1).input(0), SideBySideOutputName(0, "u"));
  EXPECT_EQ(both.graph().node(3).input(0), SideBySideOutputName(1, "u"));
  EXPECT_EQ(Names(both.graph().input()), (std::vector<std::string>{"t"}));
}

TEST(NodeModelCutter, InitializerBytesCountsWhatACutCopies) {
  ChainFile file;
  Result<NodeModelCutter> cutter = NodeModelCutter::Open(file.path);
  ASSERT_TRUE(cutter.ok());
  EXPECT_GT(cutter->InitializerBytes({0}), int64_t{8});  // w: two floats and its header
  EXPECT_EQ(cutter->InitializerBytes({1}), 0);           // Relu reads no initializer
  EXPECT_EQ(cutter->InitializerBytes({1, 2}), cutter->InitializerBytes({0}));  // w once
  EXPECT_EQ(cutter->InitializerBytes({9}), 0);
}

TEST(InferValueBytes, SizesValuesOnceSymbolicDimsAreBound) {
  const std::string bytes = Serialize(ParseOnnxText(kChainModel));
  Result<std::map<std::string, int64_t>> sizes =
      InferValueBytes(bytes, {{"x", {5, 2}}}, "chain.onnx");
  ASSERT_TRUE(sizes.ok()) << sizes.status().ToString();
  EXPECT_EQ(sizes->at("t"), 5 * 2 * 4);
  EXPECT_EQ(sizes->at("u"), 5 * 2 * 4);
  EXPECT_EQ(sizes->at("y"), 5 * 2 * 4);
}

TEST(ListNodes, RecordsInputs) {
  const std::string bytes = Serialize(ParseOnnxText(kChainModel));
  Result<std::vector<NodeInfo>> nodes = ListNodes(bytes, "chain.onnx");
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ((*nodes)[2].inputs, (std::vector<std::string>{"u", "w"}));
}

}  // namespace
}  // namespace convgate::graph
