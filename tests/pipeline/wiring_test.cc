// The load-time wiring checks (each violation names the node, the edge and both declarations) and
// the per-node step sentences.
#include "convgate/pipeline/wiring.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline/engine.h"

namespace convgate::pipeline {
namespace {

using ::testing::HasSubstr;

// Three nodes a -> b -> c; each node takes `x` and returns `y`, declared by the test.
constexpr char kChain[] = R"(
nodes:
  - name: a
    model: a.pt
    inputs: [{name: x, dtype: float32, shape: [batch, 4]}]
    outputs: [{name: y, dtype: float32, shape: [batch, 8]}]
  - name: b
    model: b.pt
    inputs: [{name: x, dtype: DTYPE, shape: SHAPE}]
    outputs: [{name: y, dtype: float32, shape: [batch, 2]}]
inputs:
  - {name: in, to: a.x}
outputs:
  - {name: out, from: b.y}
edges:
  - {from: a.y, to: b.x}
)";

Spec Chain(const std::string& dtype, const std::string& shape) {
  std::string text = kChain;
  text.replace(text.find("DTYPE"), 5, dtype);
  text.replace(text.find("SHAPE"), 5, shape);
  Result<Spec> spec = ParseSpecText(text, "chain.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return std::move(spec).value();
}

Status WiringError(const Spec& spec, const std::set<std::string>& set = {},
                   const std::map<size_t, const Tensor*>& initial = {}) {
  Result<Wiring> wiring = ValidateWiring(spec, set, initial);
  EXPECT_FALSE(wiring.ok());
  return wiring.ok() ? Status::OK() : wiring.status();
}

TEST(WiringTest, ASoundChainRunsInOrderAndBindsItsSymbols) {
  Result<Wiring> wiring = ValidateWiring(Chain("float32", "[n, 8]"), {}, {});
  ASSERT_TRUE(wiring.ok()) << wiring.status().ToString();
  EXPECT_EQ(wiring->order, (std::vector<size_t>{0, 1}));
  ASSERT_EQ(wiring->inputs.size(), 1u);
  EXPECT_EQ(wiring->inputs[0].name, "in");
  EXPECT_EQ(DescribeDecl(wiring->inputs[0]), "float32[batch, 4]");
}

TEST(WiringTest, ADtypeMismatchNamesTheEdgeAndBothDeclarations) {
  const Status status = WiringError(Chain("float16", "[batch, 8]"));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("edge a.y -> b.x (chain.yaml:16): dtype differs"));
  EXPECT_THAT(status.message(), HasSubstr("a.y declares float32[batch, 8]"));
  EXPECT_THAT(status.message(), HasSubstr("b.x declares float16[batch, 8]"));
}

TEST(WiringTest, ShapeMismatchesNameTheDim) {
  EXPECT_THAT(WiringError(Chain("float32", "[batch, 7]")).message(),
              HasSubstr("dim 1 differs: 8 vs 7 (a.y declares float32[batch, 8], b.x declares "
                        "float32[batch, 7])"));
  EXPECT_THAT(WiringError(Chain("float32", "[batch]")).message(), HasSubstr("rank differs"));
  // Symbols are pipeline-wide: a.y's 'batch' meets b.x's 3 in dim 0, then a.y's 8 meets b.x's
  // 'batch' in dim 1.
  EXPECT_THAT(WiringError(Chain("float32", "[3, batch]")).message(),
              HasSubstr("dim 1 differs: 'batch' would be 8, but it is 3 from edge a.y -> b.x"));
}

TEST(WiringTest, AnUnfedInputAndATwiceFedInputAreNamed) {
  Spec spec = Chain("float32", "[batch, 8]");
  spec.edges.erase(spec.edges.begin() + 2);  // a.y -> b.x
  EXPECT_THAT(WiringError(spec).message(),
              HasSubstr("node 'b' input 'x' (declared float32[batch, 8]) is not fed"));
  // --set gives it a value instead.
  EXPECT_TRUE(ValidateWiring(spec, {"b.x"}, {}).ok());

  Spec twice = Chain("float32", "[batch, 8]");
  twice.edges.push_back(twice.edges[2]);
  EXPECT_THAT(WiringError(twice).message(), HasSubstr("node 'b' input 'x' is fed twice"));
}

TEST(WiringTest, AnUnknownTensorIsNamedWithWhatTheNodeHas) {
  Spec spec = Chain("float32", "[batch, 8]");
  spec.edges[2].from.tensor = "z";
  EXPECT_THAT(WiringError(spec).message(),
              HasSubstr("node 'a' has no output 'z' (edge a.z -> b.x (chain.yaml:16); its "
                        "outputs: y)"));
}

TEST(WiringTest, CyclesNeedAFeedbackEdge) {
  Spec spec = Chain("float32", "[batch, 8]");
  // b.y -> a.x in the same step: a cycle. Drop the pipeline input so a.x is fed once.
  spec.edges.erase(spec.edges.begin());
  spec.inputs.clear();
  spec.nodes[1].outputs[0].shape = spec.nodes[0].inputs[0].shape;
  EdgeSpec back;
  back.from = {"b", "y"};
  back.to = {"a", "x"};
  back.line = 30;
  spec.edges.push_back(back);
  EXPECT_THAT(WiringError(spec).message(), HasSubstr("nodes 'a', 'b' lie on a cycle"));

  // As a feedback edge with a fitting initial value it is sound; b runs after a.
  spec.edges.back().feedback = true;
  InitialValue zeros;
  zeros.zeros = true;
  zeros.dtype = DType::kFloat32;
  zeros.shape = {1, 4};
  spec.edges.back().initial = zeros;
  Tensor initial =
      Tensor::FromVector(DType::kFloat32, Shape::Of({1, 4}), std::vector<float>{0, 0, 0, 0});
  Result<Wiring> wiring = ValidateWiring(spec, {}, {{spec.edges.size() - 1, &initial}});
  ASSERT_TRUE(wiring.ok()) << wiring.status().ToString();
  EXPECT_EQ(wiring->order, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(wiring->feedback, std::vector<size_t>{spec.edges.size() - 1});

  // An initial value of the wrong shape is named with both sides.
  Tensor wrong =
      Tensor::FromVector(DType::kFloat32, Shape::Of({1, 5}), std::vector<float>{0, 0, 0, 0, 0});
  EXPECT_THAT(WiringError(spec, {}, {{spec.edges.size() - 1, &wrong}}).message(),
              HasSubstr("initial value zeros float32[1, 4] declares float32[1, 5], a.x declares "
                        "float32[batch, 4]"));
}

TEST(StepVerdictsTest, SentencesNameRunsOfSteps) {
  using internal::DescribeSteps;
  std::vector<bool> drift(20, true);
  drift[0] = false;
  EXPECT_EQ(DescribeSteps(drift).sentence,
            "step 0 passes, steps 1..19 fail: the export does not generalize across re-entry");
  EXPECT_EQ(DescribeSteps(drift).failed.size(), 19u);
  EXPECT_EQ(DescribeSteps(std::vector<bool>(20, false)).sentence, "all 20 steps pass");
  EXPECT_EQ(DescribeSteps(std::vector<bool>(3, true)).sentence, "all 3 steps fail");
  EXPECT_EQ(DescribeSteps({false}).sentence, "step 0 passes");
  // A failure that comes and goes follows the data: not called a re-entry problem.
  std::vector<bool> once(8, false);
  once[5] = true;
  EXPECT_EQ(DescribeSteps(once).sentence, "steps 0..4 pass, step 5 fails, steps 6..7 pass");
}

}  // namespace
}  // namespace convgate::pipeline
