// `convgate transform` on the real binary: passes with --validate on models built in code and on
// the bundled tinycnn examples, --list-transformed and --json output, the deliberately wrong fold
// caught by --validate (exit 1), and usage (2) and load (3) errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "graph/onnx_test_util.h"
#include "testing/subprocess.h"
#include "transform/models.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;

const fs::path kBinary = fs::path(CONVGATE_BINARY_DIR) / "src/cli/convgate";

std::string Example(const std::string& name) {
  return (fs::path(CONVGATE_BINARY_DIR) / "examples" / name).string();
}

std::string Describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

class TransformCliTest : public ::testing::Test {
 protected:
  ProcessResult Convgate(std::vector<std::string> args) {
    args.insert(args.begin(), kBinary.string());
    ProcessResult result = testing::RunProcess(args);
    EXPECT_EQ(result.signal, 0) << "convgate crashed; stderr:\n" << result.err;
    return result;
  }

  // Writes the ONNX-text model as NAME and returns its path.
  std::string Write(const std::string& text, const std::string& name) {
    testing::WriteModel(testing::ParseOnnxText(text), dir_.path() / name);
    return Path(name);
  }

  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }

  testing::ScopedTempDir dir_;
};

TEST_F(TransformCliTest, FoldBatchNormValidates) {
  const std::string model = Write(testing::ConvBatchNormModel(), "bn.onnx");
  ProcessResult r = Convgate({"transform", model, "--pass", "fold_batchnorm", "-o",
                              Path("folded.onnx"), "--validate", "--samples", "3"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("fold_batchnorm ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
}

TEST_F(TransformCliTest, FoldBatchNormFoldsConstantNodeAndIdentityWeights) {
  // paddle2onnx stores weights as Constant nodes, PyTorch reads some through Identity nodes:
  // both fold, the nodes left unread are removed, and the result validates.
  const onnx::ModelProto source = testing::ParseOnnxText(testing::ConvBatchNormModel());
  testing::WriteModel(testing::WeightsAsConstantNodes(source), dir_.path() / "constants.onnx");
  testing::WriteModel(testing::WeightsThroughIdentity(source), dir_.path() / "identity.onnx");
  for (const char* name : {"constants", "identity"}) {
    ProcessResult r =
        Convgate({"transform", Path(std::string(name) + ".onnx"), "--pass", "fold_batchnorm", "-o",
                  Path(std::string(name) + "_folded.onnx"), "--validate", "--list-transformed"});
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << Describe(r);
    EXPECT_NE(r.out.find("0 created, 1 changed, 7 removed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("no longer read after folding"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("not folded"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  }
}

TEST_F(TransformCliTest, FoldBatchNormSaysWhyNothingFolded) {
  const std::string model = Write(testing::UnfoldableBatchNormModel(), "unfoldable.onnx");
  ProcessResult r =
      Convgate({"transform", model, "--pass", "fold_batchnorm", "-o", Path("out.onnx")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* reason :
       {"1 of 4 BatchNormalization nodes not folded: its input is not computed by a Conv",
        "1 of 4 BatchNormalization nodes not folded: it is in training mode",
        "1 of 4 BatchNormalization nodes not folded: its Conv output has other readers",
        "1 of 4 BatchNormalization nodes not folded: its Conv weight is not a constant (first "
        "'y4': 'wc' is computed by Mul 'wc')"}) {
    EXPECT_NE(r.out.find(std::string("fold_batchnorm: ") + reason), std::string::npos)
        << reason << "\n"
        << r.out;
  }
  ProcessResult listed = Convgate({"transform", model, "--pass", "fold_batchnorm,div_to_mul", "-o",
                                   Path("out.onnx"), "--json"});
  ASSERT_EQ(listed.exit_code, 0) << Describe(listed);
  const json record = json::parse(listed.out);
  const json& pass = record["passes"][0];
  EXPECT_EQ(pass["candidates"]["BatchNormalization"], 4) << pass.dump(2);
  ASSERT_EQ(pass["skipped"].size(), 4u) << pass.dump(2);
  EXPECT_EQ(pass["skipped"][3]["reason"], "its Conv weight is not a constant");
  EXPECT_EQ(pass["skipped"][3]["nodes"], json({"y4"}));
  EXPECT_EQ(pass["notes"].size(), 4u);
  EXPECT_EQ(record["passes"][1]["notes"], json({"div_to_mul: no Div node in the main graph"}));
}

TEST_F(TransformCliTest, WrongFoldFailsValidation) {
  const std::string model = Write(testing::ConvBatchNormModel(), "bn.onnx");
  ProcessResult r = Convgate({"transform", model, "--pass", "fold_batchnorm_wrong_for_tests", "-o",
                              Path("wrong.onnx"), "--validate", "--out", Path("results")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  Result<std::string> report = ReadFile(Path("results/report.json"));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(json::parse(*report)["verdict"], "fail") << *report;
}

TEST_F(TransformCliTest, EveryPassChainedValidatesOnHandWrittenModels) {
  struct Case {
    std::string text;
    std::string passes;
  };
  const std::vector<Case> cases = {
      {testing::MatMulAddModel(), "fuse_matmul_add"},
      {testing::DivModel(), "div_to_mul"},
      {testing::ConstantChainModel(), "constant_folding"},
      {testing::IdentityModel(), "eliminate_identity"},
      {testing::ParallelMatMulModel(), "merge_parallel_matmuls"},
  };
  for (const Case& c : cases) {
    const std::string model = Write(c.text, c.passes + ".onnx");
    ProcessResult r = Convgate(
        {"transform", model, "--pass", c.passes, "-o", Path(c.passes + "_out.onnx"), "--validate"});
    EXPECT_EQ(r.exit_code, 0) << c.passes << "\n" << Describe(r);
  }
}

TEST_F(TransformCliTest, BundledExamplesValidate) {
  // --pass before MODEL: each --pass takes exactly one value.
  ProcessResult folded = Convgate({"transform", "--pass", "fold_batchnorm", Example("tinycnn.onnx"),
                                   "-o", Path("tiny.onnx"), "--validate"});
  EXPECT_EQ(folded.exit_code, 0) << Describe(folded);
  EXPECT_NE(folded.out.find("1 changed, 1 removed"), std::string::npos) << folded.out;
  // The converted copy lowered Gemm to MatMul + Add: fusing restores a Gemm.
  ProcessResult fused =
      Convgate({"transform", Example("tinycnn_converted.onnx"), "--pass", "fuse_matmul_add", "-o",
                Path("conv.onnx"), "--validate", "--json"});
  ASSERT_EQ(fused.exit_code, 0) << Describe(fused);
  const json record = json::parse(fused.out);
  ASSERT_EQ(record["passes"].size(), 1u);
  EXPECT_EQ(record["passes"][0]["counts"]["changed"], 1) << record.dump(2);
  EXPECT_EQ(record["passes"][0]["changed_nodes"][0]["op"], "Gemm") << record.dump(2);
  EXPECT_EQ(record["validation"]["verdict"], "pass");
  // tokens.onnx: an Identity producing the graph output 'pooled' (int64 and bool inputs).
  ProcessResult identity =
      Convgate({"transform", Example("tokens.onnx"), "--pass", "eliminate_identity", "-o",
                Path("tokens.onnx"), "--validate", "--list-transformed"});
  EXPECT_EQ(identity.exit_code, 0) << Describe(identity);
  EXPECT_NE(identity.out.find("removed Identity"), std::string::npos) << identity.out;
  EXPECT_NE(identity.out.find("renamed 'pooled'"), std::string::npos) << identity.out;
}

TEST_F(TransformCliTest, ListTransformedNamesEveryNode) {
  const std::string model = Write(testing::ConvBatchNormModel(), "bn.onnx");
  ProcessResult r = Convgate({"transform", model, "--pass", "fold_batchnorm", "-o",
                              Path("folded.onnx"), "--list-transformed"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("changed Conv 'c': folded BatchNormalization 'n'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("removed BatchNormalization 'n'"), std::string::npos) << r.out;
}

TEST_F(TransformCliTest, JsonRecordHasSignaturesAndCounts) {
  const std::string model = Write(testing::IdentityModel(), "id.onnx");
  ProcessResult r = Convgate({"transform", model, "--pass", "eliminate_identity,div_to_mul", "-o",
                              Path("out.onnx"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json record = json::parse(r.out);
  ASSERT_EQ(record["passes"].size(), 2u);
  const json& pass = record["passes"][0];
  EXPECT_EQ(pass["name"], "eliminate_identity");
  EXPECT_EQ(pass["signature"], Sha256Hex("eliminate_identity").substr(0, 16));
  EXPECT_EQ(pass["preserves_computation"], true);
  EXPECT_EQ(pass["counts"]["removed"], 3);
  EXPECT_EQ(record["passes"][1]["preserves_computation"], false);
  EXPECT_EQ(record["passes"][1]["changed_nodes"].size(), 0u);  // no Div here
  EXPECT_EQ(record["nodes_before"], 5);
  EXPECT_EQ(record["nodes_after"], 2);
}

TEST_F(TransformCliTest, BadPassNameIsAUsageError) {
  const std::string model = Write(testing::DivModel(), "div.onnx");
  ProcessResult r = Convgate({"transform", model, "--pass", "fold_bn", "-o", Path("out.onnx")});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("unknown pass 'fold_bn'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("out.onnx")));
  ProcessResult param =
      Convgate({"transform", model, "--pass", "div_to_mul:x=1", "-o", Path("out.onnx")});
  EXPECT_EQ(param.exit_code, 2) << Describe(param);
}

TEST_F(TransformCliTest, TruncatedModelIsALoadError) {
  const std::string bytes = testing::Serialize(testing::ParseOnnxText(testing::DivModel()));
  ASSERT_TRUE(WriteFileAtomic(Path("cut.onnx"), bytes.substr(0, bytes.size() / 2)).ok());
  ProcessResult r = Convgate({"transform", Path("cut.onnx"), "--pass", "div_to_mul", "-o",
                              Path("out.onnx"), "--validate"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("cut.onnx"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace convgate
