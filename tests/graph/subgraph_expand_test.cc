// ListSubgraphSites and ExpandSubgraphs: If branches inlined, Loop/Scan bodies unrolled, names kept
// or prefixed, nested bodies' references to renamed values followed.
#include "convgate/graph/subgraph_expand.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/onnx_test_util.h"

namespace convgate::graph {
namespace {

using ::convgate::testing::ParseOnnxText;
using ::convgate::testing::Serialize;

constexpr char kIfModel[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, bool c) => (float[2] y) <float[2] w = {1.0, 2.0}>
{
  y = If <then_branch = g1 () => (float[2] a) { a = Add(x, w) },
          else_branch = g2 () => (float[2] b) { t = Sub(x, w)  b = Relu(t) }> (c)
}
)";

// `for i in range(n)`: h = h * w, every h stacked; an If inside reads the body's own value.
constexpr char kLoopModel[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, int64 n) => (float[2] h_final, float[3, 2] h_all) <float[2] w = {1.0, 2.0}>
{
  go = Constant <value = bool {1}> ()
  h_final, h_all = Loop <body = body (int64 i, bool cond, float[2] h) => (bool cond_out,
      float[2] h_next, float[2] h_scan) {
    cond_out = Identity(cond)
    m = Mul(h, w)
    pos = Constant <value = bool {1}> ()
    h_next = If <then_branch = t1 () => (float[2] r) { r = Relu(m) },
                 else_branch = e1 () => (float[2] s) { s = Neg(m) }> (pos)
    h_scan = Identity(h_next)
  }> (n, go, x)
}
)";

constexpr char kWhileModel[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, int64 n) => (float[2] h_final)
{
  go = Constant <value = bool {1}> ()
  h_final = Loop <body = body (int64 i, bool cond, float[2] h) => (bool cond_out, float[2] h2) {
    h2 = Relu(h)
    s = ReduceSum <keepdims = 0> (h2)
    zero = Constant <value = float {0.0}> ()
    cond_out = Greater(s, zero)
  }> (n, go, x)
}
)";

onnx::ModelProto Parse(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

std::vector<std::string> OpTypes(const onnx::GraphProto& graph) {
  std::vector<std::string> ops;
  for (const onnx::NodeProto& node : graph.node()) ops.push_back(node.op_type());
  return ops;
}

TEST(ListSubgraphSites, NamesTheConditionAndEachBranchsValues) {
  Result<std::vector<SubgraphSite>> sites =
      ListSubgraphSites(Serialize(ParseOnnxText(kIfModel)), "if.onnx");
  ASSERT_TRUE(sites.ok()) << sites.status().ToString();
  ASSERT_EQ(sites->size(), 1u);
  const SubgraphSite& site = sites->front();
  EXPECT_EQ(site.op_type, "If");
  EXPECT_EQ(site.node, "y");  // unnamed: its first output
  EXPECT_EQ(site.condition, "c");
  ASSERT_EQ(site.body_values.size(), 2u);
  EXPECT_EQ(site.body_values[0].first, "then_branch");
  EXPECT_EQ(site.body_values[0].second, std::vector<std::string>({"a"}));
  EXPECT_EQ(site.body_values[1].second, std::vector<std::string>({"t", "b"}));
}

TEST(ExpandSubgraphs, TheChosenBranchReplacesTheIf) {
  const std::string bytes = Serialize(ParseOnnxText(kIfModel));
  Result<ExpandedModel> expanded = ExpandSubgraphs(bytes, {{0, false, 0}}, "if.onnx");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  const onnx::ModelProto model = Parse(expanded->bytes);
  EXPECT_EQ(OpTypes(model.graph()), std::vector<std::string>({"Sub", "Relu", "Identity"}));
  EXPECT_EQ(model.graph().node(0).output(0), "t");  // no collision: the body's names stay
  EXPECT_EQ(model.graph().node(2).input(0), "b");
  EXPECT_EQ(model.graph().node(2).output(0), "y");
  EXPECT_EQ(expanded->values[0], std::vector<std::string>({"t", "b"}));
}

TEST(ExpandSubgraphs, ABranchValueNamedLikeAMainGraphValueIsPrefixed) {
  // The then branch produces "c", the If's own condition's name in the main graph.
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, bool c) => (float[2] y)
{
  y = If <then_branch = g1 () => (float[2] c) { c = Relu(x) },
          else_branch = g2 () => (float[2] b) { b = Neg(x) }> (c)
}
)";
  Result<ExpandedModel> expanded =
      ExpandSubgraphs(Serialize(ParseOnnxText(text)), {{0, true, 0}}, "if.onnx");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  const onnx::ModelProto model = Parse(expanded->bytes);
  EXPECT_EQ(model.graph().node(0).output(0), "y/then_branch/c");
}

TEST(ExpandSubgraphs, ALoopIsUnrolledWithStateAndScanOutputsWired) {
  const std::string bytes = Serialize(ParseOnnxText(kLoopModel));
  Result<std::vector<SubgraphSite>> sites = ListSubgraphSites(bytes, "loop.onnx");
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(sites->size(), 1u);
  EXPECT_TRUE(sites->front().loop_runs_trip_count);
  EXPECT_EQ(sites->front().trip_count, "n");
  EXPECT_TRUE(sites->front().counted_by.empty());

  Result<ExpandedModel> expanded = ExpandSubgraphs(bytes, {{1, true, 3}}, "loop.onnx");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  const onnx::ModelProto model = Parse(expanded->bytes);
  const onnx::GraphProto& graph = model.graph();
  int ifs = 0;
  const onnx::NodeProto* concat = nullptr;
  const onnx::NodeProto* final_state = nullptr;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "If") {
      ++ifs;
      // The nested branch reads this iteration's copy of the body value "m".
      const std::string expected = "h_final/iter" + std::to_string(ifs - 1) + "/m";
      EXPECT_EQ(node.attribute(0).g().node(0).input(0), expected);
    }
    if (node.op_type() == "Concat") concat = &node;
    if (node.output(0) == "h_final") final_state = &node;
  }
  EXPECT_EQ(ifs, 3);
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->input_size(), 3);
  EXPECT_EQ(concat->output(0), "h_all");
  ASSERT_NE(final_state, nullptr);
  EXPECT_EQ(final_state->input(0), "h_final/iter2/h_next");
  EXPECT_EQ(expanded->nested[1].size(), 3u);
  EXPECT_EQ(expanded->nested[1][0], "h_final/iter0/h_next");
  // The first iteration's state is the Loop's input.
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.output(0) == "h_final/iter0/m") EXPECT_EQ(node.input(0), "x");
    if (node.output(0) == "h_final/iter1/m") EXPECT_EQ(node.input(0), "h_final/iter0/h_next");
  }
}

TEST(ExpandSubgraphs, UnrolledCopiesShareTheBodysInitializers) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, int64 n) => (float[2] h_final)
{
  go = Constant <value = bool {1}> ()
  h_final = Loop <body = body (int64 i, bool cond, float[2] h) => (bool cond_out, float[2] h2)
      <float[2] b = {1.0, 1.0}> {
    cond_out = Identity(cond)
    h2 = Add(h, b)
  }> (n, go, x)
}
)";
  Result<ExpandedModel> expanded =
      ExpandSubgraphs(Serialize(ParseOnnxText(text)), {{1, true, 3}}, "loop.onnx");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  const onnx::ModelProto model = Parse(expanded->bytes);
  int copies = 0;
  for (const onnx::TensorProto& tensor : model.graph().initializer()) {
    if (tensor.name().ends_with("/b")) ++copies;
  }
  EXPECT_EQ(copies, 1);
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.op_type() == "Add") EXPECT_EQ(node.input(1), "h_final/iter0/b");
  }
}

TEST(ListSubgraphSites, ALoopWhoseBodyDecidesWhenToStopNeedsACount) {
  Result<std::vector<SubgraphSite>> sites =
      ListSubgraphSites(Serialize(ParseOnnxText(kWhileModel)), "while.onnx");
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(sites->size(), 1u);
  EXPECT_FALSE(sites->front().loop_runs_trip_count);
  EXPECT_TRUE(sites->front().counted_by.empty());  // no scan output to count iterations by
}

TEST(ExpandSubgraphs, ANodeThatIsNotASiteIsRefused) {
  Result<ExpandedModel> expanded =
      ExpandSubgraphs(Serialize(ParseOnnxText(kLoopModel)), {{0, true, 1}}, "loop.onnx");
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(expanded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(expanded.status().message().find("loop.onnx"), std::string::npos);
  Result<ExpandedModel> zero =
      ExpandSubgraphs(Serialize(ParseOnnxText(kLoopModel)), {{1, true, 0}}, "loop.onnx");
  EXPECT_FALSE(zero.ok());
}

}  // namespace
}  // namespace convgate::graph
