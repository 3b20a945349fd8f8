// `convgate pipeline` and `compare --feedback` on the real binary, over the pipeline fixtures
// (scripts/make_pipeline_fixtures.sh: TorchScript sources, ONNX targets, some deliberately wrong):
// the three-stage pipeline of examples/pipeline/three_stage.yaml and the recurrent model of
// examples/pipeline/recurrent.yaml, whose hidden state is fed back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;
using testing::RunProcess;

class PipelineCliTest : public testing::CliTest {
 protected:
  static void SetUpTestSuite() {
#if CONVGATE_WITH_TORCH
    fixtures_ = testing::PipelineFixtureFolder(fixture_error_);
#endif
  }
  void SetUp() override {
#if !CONVGATE_WITH_TORCH
    GTEST_SKIP() << "built without libtorch (CONVGATE_WITH_TORCH=OFF): the sources are TorchScript";
#endif
    ASSERT_TRUE(fixture_error_.empty()) << fixture_error_;
    CliTest::SetUp();
    // Models beside the spec: relative paths in a spec are resolved against its folder. Only the
    // models and data the fixture script makes: a spec written into the shared cache by hand
    // would otherwise be linked here, and every test's Spec() would write through the link into
    // the one shared file while other tests read it.
    for (const auto& entry : fs::directory_iterator(fixtures_)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".onnx" && ext != ".pt" && ext != ".npz") continue;
      fs::create_symlink(entry.path(), dir_ / entry.path().filename());
    }
  }

  // The example spec `name`.yaml, each `from` replaced by `to`, written into the test's folder.
  std::string Spec(const std::string& name,
                   const std::vector<std::pair<std::string, std::string>>& edits = {}) {
    std::ifstream in(fs::path(CONVGATE_SOURCE_DIR) / "examples" / "pipeline" / (name + ".yaml"));
    std::stringstream text;
    text << in.rdbuf();
    std::string spec = text.str();
    for (const auto& [from, to] : edits) {
      const size_t at = spec.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) spec.replace(at, from.size(), to);
    }
    const fs::path path = dir_ / (name + ".yaml");
    fs::remove(path);  // never write through a link into the shared fixture folder
    std::ofstream(path) << spec;
    return path.string();
  }

  std::string Out() const { return (dir_ / "out").string(); }
  json Report() const {
    std::ifstream in(dir_ / "out" / "report.json");
    EXPECT_TRUE(in.good()) << "missing report.json";
    return json::parse(in);
  }
  static const json& Node(const json& report, const std::string& name) {
    for (const json& node : report["nodes"]) {
      if (node["name"] == name) return node;
    }
    ADD_FAILURE() << "no node " << name;
    return report;
  }

  inline static std::string fixtures_;
  inline static std::string fixture_error_;
};

TEST_F(PipelineCliTest, CorrectConversionsOfThreeStagesPassOverTwentySteps) {
  ProcessResult r = Convgate({"pipeline", Spec("three_stage"), "--steps", "20", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = Report();
  EXPECT_EQ(report["verdict"], "pass");
  EXPECT_EQ(report["steps"], 20);
  EXPECT_EQ(report["order"], json({"features", "embedding", "classifier"}));
  EXPECT_EQ(report["policy"]["atol"], 1e-5);  // the float32 defaults, not widened
  // TorchScript and ONNX nodes mixed.
  EXPECT_EQ(Node(report, "features")["source"]["model"]["backend"], "torch");
  EXPECT_EQ(Node(report, "classifier")["source"]["model"]["backend"], "ort");
  for (const std::string name : {"features", "embedding"}) {
    const json& node = Node(report, name);
    EXPECT_TRUE(node["passed"]) << name;
    EXPECT_EQ(node["replay"]["steps_verdict"], "all 20 steps pass") << name;
    EXPECT_EQ(node["replay"]["results"].size(), 20u) << name;  // one output, every step
    EXPECT_EQ(node["swapped"]["steps_verdict"], "all 20 steps pass") << name;
  }
  // Every node's outputs were sanity-checked at every step.
  EXPECT_EQ(Node(report, "embedding")["source"]["summary"]["checks"], 20);
  EXPECT_EQ(report["outputs_compared"]["summary"]["checks"], 20);
  EXPECT_EQ(report["outputs_compared"]["steps_verdict"], "all 20 steps pass");
  EXPECT_NE(r.out.find("all 20 steps pass"), std::string::npos) << r.out;
  // The pipeline's own result files follow the other workflows'.
  EXPECT_TRUE(fs::exists(dir_ / "out" / "verify_result.json"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "junit.xml"));
}

// --benchmark times each node that has a target (TorchScript source, ONNX target) on inputs made
// from the node's declarations, after the run.
TEST_F(PipelineCliTest, BenchmarkTimesEveryConvertedNode) {
  ProcessResult r = Convgate({"pipeline", Spec("three_stage"), "--benchmark", "--iterations", "10",
                              "--warmup", "1", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = Report();
  ASSERT_EQ(report["benchmarks"].size(), 2u) << report.dump().substr(0, 500);
  EXPECT_EQ(report["benchmarks"][0]["node"], "features");
  const json& sides = report["benchmarks"][0]["benchmark"]["sides"];
  ASSERT_EQ(sides.size(), 2u);
  EXPECT_EQ(sides[0]["backend"], "torch");
  EXPECT_EQ(sides[1]["backend"], "ort");
  EXPECT_EQ(sides[1]["latency"]["count"], 10);
  EXPECT_TRUE(report["benchmarks"][0]["benchmark"]["speed"].is_object());
  EXPECT_NE(r.out.find("node embedding, benchmark:"), std::string::npos) << r.out;
}

TEST_F(PipelineCliTest, DescribeNamesInputsOutputsFeedbackAndOrder) {
  ProcessResult r = Convgate({"pipeline", Spec("recurrent"), "--describe"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("input     x float32[1, 4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output    y <- rnn.y float32[1, 2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("feedback  rnn.h_out -> rnn.h (initial zeros float32[1, 8]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("order     rnn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing ran"), std::string::npos) << r.out;
}

TEST_F(PipelineCliTest, AStateCastToFloat16PassesStepZeroAndFailsLaterSteps) {
  ProcessResult r = Convgate({"pipeline", Spec("recurrent"), "--steps", "20", "--out", Out()});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  const json report = Report();
  const json& rnn = Node(report, "rnn");
  EXPECT_EQ(rnn["replay"]["steps_verdict"],
            "step 0 passes, steps 1..19 fail: the export does not generalize across re-entry");
  EXPECT_EQ(rnn["replay"]["failed_steps"].size(), 19u);
  EXPECT_EQ(rnn["replay"]["failed_steps"][0], 1);
  EXPECT_EQ(report["outputs_compared"]["failed_steps"][0], 1);
  EXPECT_NE(r.out.find("step 0 passes, steps 1..19 fail"), std::string::npos) << r.out;

  // Issue 27, item 5: the pipeline's report re-judged: every comparison in it, under the new
  // policy; the outputs decide the exit code as in the run.
  ProcessResult same = Convgate({"check", Out()});
  EXPECT_EQ(same.exit_code, 1) << Describe(same);
  EXPECT_NE(same.out.find("3 comparisons of the pipeline"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("rnn (replay) *"), std::string::npos) << same.out;
  ProcessResult loose = Convgate({"check", Out() + "/report.json", "--atol", "1", "--json"});
  EXPECT_EQ(loose.exit_code, 0) << Describe(loose);
  const json rejudged = json::parse(loose.out);
  ASSERT_EQ(rejudged.size(), 3u) << loose.out;
  EXPECT_EQ(rejudged[2]["name"], "pipeline outputs");
  EXPECT_EQ(rejudged[2]["was"], "fail");
  EXPECT_EQ(rejudged[2]["now"], "pass");

  // The same model exported without the cast passes every step.
  ProcessResult ok = Convgate(
      {"pipeline", Spec("recurrent", {{"target: rnn_fp16_state.onnx", "target: rnn.onnx"}}),
       "--steps", "20", "--out", Out()});
  ASSERT_EQ(ok.exit_code, 0) << Describe(ok);
  EXPECT_EQ(Node(Report(), "rnn")["replay"]["steps_verdict"], "all 20 steps pass");
}

TEST_F(PipelineCliTest, AWrongEdgeDtypeOrShapeIsCaughtAtLoadWithBothDeclarations) {
  const std::string feats =
      "      - {name: feats, dtype: float32, shape: [batch, 32]}\n    outputs:\n"
      "      - {name: emb";
  ProcessResult dtype = Convgate(
      {"pipeline", Spec("three_stage", {{feats,
                                         "      - {name: feats, dtype: float16, shape: "
                                         "[batch, 32]}\n    outputs:\n      - {name: emb"}})});
  ASSERT_EQ(dtype.exit_code, 2) << Describe(dtype);
  EXPECT_NE(dtype.err.find("edge features.feats -> embedding.feats"), std::string::npos)
      << dtype.err;
  EXPECT_NE(dtype.err.find("dtype differs (features.feats declares float32[batch, 32], "
                           "embedding.feats declares float16[batch, 32])"),
            std::string::npos)
      << dtype.err;

  ProcessResult shape = Convgate(
      {"pipeline", Spec("three_stage", {{feats,
                                         "      - {name: feats, dtype: float32, shape: "
                                         "[batch, 31]}\n    outputs:\n      - {name: emb"}})});
  ASSERT_EQ(shape.exit_code, 2) << Describe(shape);
  EXPECT_NE(shape.err.find("dim 1 differs: 32 vs 31 (features.feats declares float32[batch, 32], "
                           "embedding.feats declares float32[batch, 31])"),
            std::string::npos)
      << shape.err;
}

TEST_F(PipelineCliTest, AMissingInitialValueIsNamed) {
  ProcessResult r = Convgate(
      {"pipeline",
       Spec("recurrent", {{"    initial: {zeros: true, dtype: float32, shape: [1, 8]}\n", ""}})});
  ASSERT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("feedback edge rnn.h_out -> rnn.h (feedback) has no initial value"),
            std::string::npos)
      << r.err;
}

TEST_F(PipelineCliTest, AModelThatDoesNotLoadIsExitThree) {
  ProcessResult r =
      Convgate({"pipeline", Spec("three_stage", {{"model: embedding.pt", "model: missing.pt"}})});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("node 'embedding'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.pt"), std::string::npos) << r.err;
}

// embedding_nan.onnx turns NaN where max(feats) > 50; nan_inputs.npz makes step 5's audio large.
TEST_F(PipelineCliTest, NanIntroducedAtOneStepIsInheritedDownstream) {
  ProcessResult r = Convgate(
      {"pipeline", Spec("three_stage", {{"target: embedding.onnx", "target: embedding_nan.onnx"}}),
       "--load-inputs", Path("nan_inputs.npz"), "--out", Out()});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  const json report = Report();
  EXPECT_EQ(report["steps"], 20);  // one per sample of the file
  const json& embedding = Node(report, "embedding");
  EXPECT_EQ(embedding["replay"]["failed_steps"], json({5}));
  EXPECT_EQ(embedding["replay"]["steps_verdict"],
            "steps 0..4 pass, step 5 fails, steps 6..19 pass");
  ASSERT_EQ(embedding["non_finite"].size(), 1u);
  EXPECT_EQ(embedding["non_finite"][0]["step"], 5);
  EXPECT_EQ(embedding["non_finite"][0]["origin"], "introduced");
  const json& classifier = Node(report, "classifier");
  ASSERT_EQ(classifier["non_finite"].size(), 1u);
  EXPECT_EQ(classifier["non_finite"][0]["step"], 5);
  EXPECT_EQ(classifier["non_finite"][0]["origin"], "inherited");
  EXPECT_EQ(classifier["non_finite"][0]["from"], "embedding.emb");
  EXPECT_TRUE(Node(report, "features").value("non_finite", json::array()).empty());
  EXPECT_NE(r.out.find("embedding: NaN introduced at step 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("classifier: NaN inherited at step 5"), std::string::npos) << r.out;
}

// With the pipeline output taken from features, embedding_nan's step 5 never reaches it: reported,
// and gating only under --strict.
TEST_F(PipelineCliTest, StrictGatesOnNodesTheOutputsDoNotShow) {
  const std::string spec =
      Spec("three_stage", {{"target: embedding.onnx", "target: embedding_nan.onnx"},
                           {"from: classifier.logits", "from: features.feats"}});
  ProcessResult lenient =
      Convgate({"pipeline", spec, "--load-inputs", Path("nan_inputs.npz"), "--out", Out()});
  ASSERT_EQ(lenient.exit_code, 0) << Describe(lenient);
  EXPECT_FALSE(Node(Report(), "embedding")["passed"]);
  ProcessResult strict =
      Convgate({"pipeline", spec, "--load-inputs", Path("nan_inputs.npz"), "--strict"});
  EXPECT_EQ(strict.exit_code, 1) << Describe(strict);
}

TEST_F(PipelineCliTest, WithoutTargetsEveryNodeIsSanityCheckedAndOutputsSaved) {
  ProcessResult r = Convgate({"pipeline",
                              Spec("three_stage", {{"target: features.onnx", "# no target"},
                                                   {"target: embedding.onnx", "# no target"}}),
                              "--steps", "3", "--save-outputs", Path("outputs.npz")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(fs::exists(dir_ / "outputs.npz"));
  EXPECT_NE(r.out.find("pass (3 checks)"), std::string::npos) << r.out;
}

// --to converts every node without a target through the conversion cache (here an opset upgrade
// of an all-ONNX pipeline: a faithful conversion, so every step passes).
TEST_F(PipelineCliTest, ToConvertsEveryNodeAndValidatesIt) {
  std::ofstream(dir_ / "onnx.yaml") << R"(
nodes:
  - {name: embedding, model: embedding.onnx}
  - {name: classifier, model: classifier.onnx}
inputs:
  - {name: feats, to: embedding.feats}
outputs:
  - {name: logits, from: classifier.logits}
edges:
  - {from: embedding.emb, to: classifier.emb}
)";
  ProcessResult r = RunProcess({"/usr/bin/env", "CONVGATE_CACHE_DIR=" + Path("cache"),
                                Binary().string(), "pipeline", Path("onnx.yaml"), "--to",
                                "opset:17", "--steps", "5", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = Report();
  for (const std::string name : {"embedding", "classifier"}) {
    const json& node = Node(report, name);
    EXPECT_EQ(node["conversion"].get<std::string>().rfind("opset:17: ", 0), 0u) << node;
    EXPECT_EQ(node["replay"]["steps_verdict"], "all 5 steps pass") << name;
  }
}

TEST_F(PipelineCliTest, CompareFeedbackRunsAStatefulModelAsALoop) {
  ProcessResult r = Convgate({"compare", Path("rnn.onnx"), Path("rnn_fp16_state.onnx"),
                              "--feedback", "h_out=h", "--steps", "20", "--out", Out()});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  const json report = Report();
  EXPECT_EQ(report["command"], "compare");
  ASSERT_EQ(report["nodes"].size(), 1u);
  EXPECT_EQ(report["nodes"][0]["replay"]["steps_verdict"],
            "step 0 passes, steps 1..19 fail: the export does not generalize across re-entry");
  EXPECT_EQ(report["feedback"][0], "model.h_out -> model.h (initial zeros float32[1, 8])");

  ProcessResult same = Convgate(
      {"compare", Path("rnn.onnx"), Path("rnn.onnx"), "--feedback", "h_out=h", "--steps", "20"});
  EXPECT_EQ(same.exit_code, 0) << Describe(same);

  ProcessResult bad =
      Convgate({"compare", Path("rnn.onnx"), Path("rnn.onnx"), "--feedback", "nope=h"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("has no output 'nope'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace convgate
