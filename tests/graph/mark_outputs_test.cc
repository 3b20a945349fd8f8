#include <gtest/gtest.h>

#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"
#include "convgate/graph/onnx_model.h"
#include "graph/onnx_test_util.h"

namespace convgate::graph {
namespace {

using ::convgate::testing::ParseOnnxText;
using ::convgate::testing::Serialize;

// t and u are intermediates; u's type is declared in value_info only through inference.
constexpr char kChainModel[] = R"(
<ir_version: 8, opset_import: ["" : 15, "com.example" : 1]>
g (float[N, 2] x) => (float[N, 2] y) <float[2] w = {1.0, 2.0}>
{
  t = Add(x, w)
  u = Relu(t)
  v = com.example.Opaque(u)
  y = Mul(u, w)
}
)";

onnx::ModelProto Parse(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

std::vector<std::string> OutputNames(const onnx::ModelProto& model) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& output : model.graph().output()) names.push_back(output.name());
  return names;
}

TEST(OutputsSuffix, AppendedToTheFileGivesWhatWithOutputsGives) {
  Result<TempDir> dir = TempDir::Create("mark-outputs-test");
  ASSERT_TRUE(dir.ok());
  const std::filesystem::path path = dir->path() / "chain.onnx";
  const std::string bytes = Serialize(ParseOnnxText(kChainModel));
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  Result<std::string> suffix = OutputsSuffix(path, {"u", "y", "t", "u"});
  ASSERT_TRUE(suffix.ok()) << suffix.status().ToString();
  const onnx::ModelProto appended = Parse(bytes + *suffix);
  const onnx::ModelProto marked = Parse(*WithOutputs(bytes, {"u", "y", "t", "u"}, "chain.onnx"));
  EXPECT_EQ(OutputNames(appended), OutputNames(marked));
  for (int output_idx = 0; output_idx < marked.graph().output_size(); ++output_idx) {
    EXPECT_EQ(appended.graph().output(output_idx).SerializeAsString(),
              marked.graph().output(output_idx).SerializeAsString());
  }
  // Everything else is the file's own.
  onnx::ModelProto rest = appended;
  rest.mutable_graph()->mutable_output()->DeleteSubrange(1, rest.graph().output_size() - 1);
  EXPECT_EQ(rest.SerializeAsString(), Parse(bytes).SerializeAsString());
  EXPECT_EQ(*OutputsSuffix(path, {"y"}), "");  // nothing to add
  Result<std::string> unknown = OutputsSuffix(path, {"nope"});
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("chain.onnx"), std::string::npos);
}

TEST(WithOutputs, AppendsIntermediatesWithInferredTypes) {
  const std::string bytes = Serialize(ParseOnnxText(kChainModel));
  Result<std::string> marked = WithOutputs(bytes, {"u", "y", "t", "u"}, "chain.onnx");
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  const onnx::ModelProto model = Parse(*marked);
  EXPECT_EQ(OutputNames(model), (std::vector<std::string>{"y", "u", "t"}));
  const onnx::TypeProto& u_type = model.graph().output(1).type();
  ASSERT_TRUE(u_type.has_tensor_type());
  EXPECT_EQ(u_type.tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(u_type.tensor_type().shape().dim_size(), 2);
  EXPECT_EQ(u_type.tensor_type().shape().dim(1).dim_value(), 2);
  // Inferred value_info stays out of the copy.
  EXPECT_EQ(model.graph().value_info_size(), 0);
}

TEST(WithOutputs, PrefersDeclaredValueInfo) {
  onnx::ModelProto source = ParseOnnxText(kChainModel);
  onnx::ValueInfoProto* declared = source.mutable_graph()->add_value_info();
  declared->set_name("t");
  declared->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  declared->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("B");
  declared->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  Result<std::string> marked = WithOutputs(Serialize(source), {"t"}, "chain.onnx");
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  const onnx::ModelProto model = Parse(*marked);
  EXPECT_EQ(model.graph().output(1).type().tensor_type().shape().dim(0).dim_param(), "B");
}

TEST(WithOutputs, ValueOfUnknownOpGetsNoType) {
  Result<std::string> marked =
      WithOutputs(Serialize(ParseOnnxText(kChainModel)), {"v", "w", "x"}, "chain.onnx");
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  const onnx::ModelProto model = Parse(*marked);
  EXPECT_EQ(OutputNames(model), (std::vector<std::string>{"y", "v", "w", "x"}));
  EXPECT_FALSE(model.graph().output(1).has_type());
  // An initializer's type is its element type and dims.
  EXPECT_EQ(model.graph().output(2).type().tensor_type().shape().dim(0).dim_value(), 2);
  EXPECT_EQ(model.graph().output(3).type().tensor_type().shape().dim(0).dim_param(), "N");
}

TEST(WithOutputs, ExistingOutputsOnlyReturnsTheModelUnchanged) {
  const std::string bytes = Serialize(ParseOnnxText(kChainModel));
  Result<std::string> marked = WithOutputs(bytes, {"y"}, "chain.onnx");
  ASSERT_TRUE(marked.ok());
  EXPECT_EQ(*marked, bytes);
}

TEST(WithOutputs, UnknownValueIsNotFoundNamingIt) {
  Result<std::string> marked =
      WithOutputs(Serialize(ParseOnnxText(kChainModel)), {"t", "nope"}, "dir/chain.onnx");
  ASSERT_FALSE(marked.ok());
  EXPECT_EQ(marked.status().code(), StatusCode::kNotFound);
  EXPECT_NE(marked.status().message().find("'nope'"), std::string::npos);
  EXPECT_NE(marked.status().message().find("dir/chain.onnx"), std::string::npos);
}

TEST(WithOutputs, GarbageBytesAreDataLoss) {
  Result<std::string> marked = WithOutputs(std::string("\x0a\xff\xff", 3), {"t"}, "bad.onnx");
  ASSERT_FALSE(marked.ok());
  EXPECT_EQ(marked.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(marked.status().message().find("bad.onnx"), std::string::npos);
}

TEST(IntermediateNames, ListsNodeOutputsInOrderSkippingOmittedOnes) {
  onnx::ModelProto model = ParseOnnxText(kChainModel);
  // Dropout's optional mask output omitted by an empty name, as exporters write it.
  onnx::NodeProto* dropout = model.mutable_graph()->add_node();
  dropout->set_op_type("Dropout");
  dropout->add_input("y");
  dropout->add_output("z");
  dropout->add_output("");
  Result<std::vector<std::string>> names = IntermediateNames(Serialize(model));
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"t", "u", "v", "y", "z"}));
}

}  // namespace
}  // namespace convgate::graph
