// Parsing pipeline specs: the committed examples, and each malformed form with its message.
#include "convgate/pipeline/spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace convgate::pipeline {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kExamples = fs::path(CONVGATE_SOURCE_DIR) / "examples" / "pipeline";

Status ParseError(const std::string& text) {
  Result<Spec> spec = ParseSpecText(text, "pipe.yaml");
  EXPECT_FALSE(spec.ok()) << "parsed:\n" << text;
  return spec.ok() ? Status::OK() : spec.status();
}

TEST(SpecTest, ParsesTheThreeStageExample) {
  Result<Spec> spec = ParseSpec(kExamples / "three_stage.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->nodes.size(), 3u);
  EXPECT_EQ(spec->nodes[0].name, "features");
  EXPECT_EQ(spec->nodes[0].model, "features.pt");
  EXPECT_EQ(spec->nodes[0].target, "features.onnx");
  ASSERT_TRUE(spec->nodes[0].inputs_declared);
  ASSERT_EQ(spec->nodes[0].inputs[0].shape.size(), 2u);
  EXPECT_EQ(spec->nodes[0].inputs[0].shape[0].symbol, "batch");
  EXPECT_EQ(spec->nodes[0].inputs[0].shape[1].value, 16);
  EXPECT_FALSE(spec->nodes[2].inputs_declared);  // an ONNX node: read from the model
  EXPECT_EQ(spec->inputs, std::vector<std::string>{"audio"});
  EXPECT_EQ(spec->outputs, std::vector<std::string>{"logits"});
  // audio -> features.audio, classifier.logits -> logits, and two in-step edges.
  ASSERT_EQ(spec->edges.size(), 4u);
  EXPECT_EQ(spec->edges[0].ToString(), "audio -> features.audio");
  EXPECT_EQ(spec->edges[2].ToString(), "features.feats -> embedding.feats");
}

TEST(SpecTest, ParsesTheRecurrentExampleWithItsInitialValue) {
  Result<Spec> spec = ParseSpec(kExamples / "recurrent.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const EdgeSpec& feedback = spec->edges.back();
  ASSERT_TRUE(feedback.feedback);
  EXPECT_EQ(feedback.ToString(), "rnn.h_out -> rnn.h (feedback)");
  ASSERT_TRUE(feedback.initial.has_value());
  EXPECT_EQ(feedback.initial->Describe(), "zeros float32[1, 8]");
}

TEST(SpecTest, AFeedbackEdgeWithoutAnInitialValueIsNamed) {
  const Status status = ParseError(R"(
nodes:
  - {name: rnn, model: rnn.onnx}
outputs:
  - {name: y, from: rnn.y}
feedback:
  - {from: rnn.h_out, to: rnn.h}
)");
  EXPECT_THAT(status.message(), HasSubstr("pipe.yaml:7"));
  EXPECT_THAT(status.message(),
              HasSubstr("feedback edge rnn.h_out -> rnn.h (feedback) has no initial value"));
}

TEST(SpecTest, UnknownKeysAreRefusedWithTheirLine) {
  const Status status = ParseError("nodes:\n  - {name: a, model: a.onnx, modle: b}\noutputs: []\n");
  EXPECT_THAT(status.message(), HasSubstr("pipe.yaml:2"));
  EXPECT_THAT(status.message(), HasSubstr("unknown key 'modle'"));
}

TEST(SpecTest, EndpointsMustNameANodeAndATensor) {
  EXPECT_THAT(ParseError("nodes:\n  - {name: a, model: a.onnx}\noutputs:\n"
                         "  - {name: y, from: b.y}\n")
                  .message(),
              HasSubstr("no node is named 'b'"));
  EXPECT_THAT(ParseError("nodes:\n  - {name: a, model: a.onnx}\noutputs:\n"
                         "  - {name: y, from: y}\n")
                  .message(),
              HasSubstr("'y' is not NODE.TENSOR"));
}

TEST(SpecTest, MalformedDeclarationsAndInitialValues) {
  EXPECT_THAT(ParseError("nodes:\n  - name: a\n    model: a.pt\n    inputs:\n"
                         "      - {name: x, dtype: float33}\noutputs: []\n")
                  .message(),
              HasSubstr("unknown dtype 'float33'"));
  EXPECT_THAT(ParseError("nodes:\n  - {name: a, model: a.onnx}\n  - {name: a, model: b.onnx}\n"
                         "outputs: []\n")
                  .message(),
              HasSubstr("node 'a' is declared twice"));
  EXPECT_THAT(ParseError("nodes:\n  - {name: a, model: a.onnx}\noutputs: []\nfeedback:\n"
                         "  - {from: a.o, to: a.i, initial: {zeros: true, dtype: float32, "
                         "shape: [n]}}\n")
                  .message(),
              HasSubstr("zeros need a fixed shape"));
  EXPECT_THAT(ParseError("nodes: []\noutputs: []\n").message(),
              HasSubstr("nodes must be a non-empty list"));
  EXPECT_THAT(ParseError("nodes: [\n").message(), HasSubstr("not valid YAML"));
}

TEST(SpecTest, AMissingSpecFileIsNotFound) {
  Result<Spec> spec = ParseSpec("/nonexistent/pipe.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("/nonexistent/pipe.yaml"));
}

}  // namespace
}  // namespace convgate::pipeline
