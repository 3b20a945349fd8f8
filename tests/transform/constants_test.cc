// LookUpConstant, the one way the passes read constants: initializers, every Constant attribute
// they take, Identity chains, and the reasons given for values that are not constants.
#include "transform/constants.h"

#include <gtest/gtest.h>

#include "graph/onnx_test_util.h"

namespace convgate::transform {
namespace {

class ConstantsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testing::ParseOnnxText(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[2] x, float[2] shadowed) => (float[2] y)\n"
        "<float[2] init = {1.0, 2.0}, float[2] shadowed = {3.0, 4.0}>\n{\n"
        "  t = Constant <value = float[2] {5.0, 6.0}> ()\n"
        "  f = Constant <value_float = 0.5> ()\n"
        "  fs = Constant <value_floats = [1.5, 2.5, 3.5]> ()\n"
        "  i = Constant <value_int = 7> ()\n"
        "  is = Constant <value_ints = [8, 9]> ()\n"
        "  s = Constant <value_string = \"text\"> ()\n"
        "  id1 = Identity (t)\n"
        "  id2 = Identity (id1)\n"
        "  idx = Identity (x)\n"
        "  r = Relu (x)\n"
        "  idr = Identity (r)\n"
        "  y = Add (x, id2)\n}\n");
  }

  std::vector<double> Values(const std::string& name) {
    Result<std::optional<Tensor>> tensor = ReadConstant(model_.graph(), name);
    EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
    std::vector<double> values;
    if (!tensor.ok() || !*tensor) return values;
    for (int64_t flat = 0; flat < (*tensor)->num_elements(); ++flat) {
      values.push_back((*tensor)->GetDouble(flat));
    }
    return values;
  }

  std::string WhyNot(const std::string& name) {
    const ConstantLookup lookup = LookUpConstant(model_.graph(), name);
    EXPECT_FALSE(lookup) << name;
    return lookup.why_not;
  }

  onnx::ModelProto model_;
};

using Doubles = std::vector<double>;

TEST_F(ConstantsTest, ReadsInitializersAndEveryNumericConstantAttribute) {
  EXPECT_EQ(Values("init"), (Doubles{1.0, 2.0}));
  EXPECT_EQ(Values("t"), (Doubles{5.0, 6.0}));
  EXPECT_EQ(Values("f"), Doubles{0.5});
  EXPECT_EQ(Values("fs"), (Doubles{1.5, 2.5, 3.5}));
  EXPECT_EQ(Values("i"), Doubles{7.0});
  EXPECT_EQ(Values("is"), (Doubles{8.0, 9.0}));
  Result<std::optional<Tensor>> scalar = ReadConstant(model_.graph(), "f");
  ASSERT_TRUE(scalar.ok() && *scalar);
  EXPECT_TRUE((*scalar)->shape().dims().empty());  // value_float is a scalar
  EXPECT_EQ((*ReadConstant(model_.graph(), "is"))->dtype(), DType::kInt64);
}

TEST_F(ConstantsTest, FollowsIdentityChainsAndNamesTheNodesOnTheWay) {
  EXPECT_EQ(Values("id2"), (Doubles{5.0, 6.0}));
  const ConstantLookup lookup = LookUpConstant(model_.graph(), "id2");
  EXPECT_EQ(lookup.nodes, (std::vector<int>{7, 6, 0}));  // id2, id1, t
}

TEST_F(ConstantsTest, SaysWhyAValueIsNotAConstant) {
  EXPECT_EQ(WhyNot("x"), "'x' is a graph input");
  EXPECT_EQ(WhyNot("shadowed"),
            "'shadowed' is an initializer that the graph input of the same name may override");
  EXPECT_EQ(WhyNot("r"), "'r' is computed by Relu 'r'");
  EXPECT_EQ(WhyNot("idr"),
            "'idr' comes through Identity 'idr' from 'r', which is computed by Relu 'r'");
  EXPECT_EQ(WhyNot("idx"), "'idx' comes through Identity 'idx' from 'x', which is a graph input");
  EXPECT_EQ(WhyNot("s"),
            "'s' is computed by Constant 's' from value_string, which passes do not read");
  EXPECT_EQ(WhyNot("nowhere"), "'nowhere' is produced by no node of the main graph");
  EXPECT_EQ(WhyNot(""), "the input is omitted");
}

TEST_F(ConstantsTest, ACycleOfIdentityNodesEnds) {
  onnx::GraphProto graph;
  for (const auto& [in, out] : {std::pair{"a", "b"}, std::pair{"b", "a"}}) {
    onnx::NodeProto* node = graph.add_node();
    node->set_op_type("Identity");
    node->add_input(in);
    node->add_output(out);
  }
  EXPECT_FALSE(LookUpConstant(graph, "a"));
}

TEST_F(ConstantsTest, ErasesUnreadConstantsAndTheIdentityNodesOverThem) {
  onnx::GraphProto& graph = *model_.mutable_graph();
  // y reads id2 only: everything else constant is unread, as is the chain once y stops reading it.
  graph.mutable_node(graph.node_size() - 1)->set_input(1, "x");
  std::vector<std::string> removed;
  for (const onnx::NodeProto& node : EraseUnreadConstants(graph)) removed.push_back(node.output(0));
  EXPECT_EQ(removed, (std::vector<std::string>{"f", "fs", "i", "is", "s", "id2", "id1", "t"}));
  std::vector<std::string> kept;
  for (const onnx::NodeProto& node : graph.node()) kept.push_back(node.output(0));
  EXPECT_EQ(kept, (std::vector<std::string>{"idx", "r", "idr", "y"}));
}

}  // namespace
}  // namespace convgate::transform
