// `compare --per-node` on the real binary: a fault injected into one node of tinycnn (by
// convgate-inject-fault) is located at that node, a tiny memory budget takes more runs and finds
// the same, and --strict makes intermediate failures gate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;

const fs::path kInjectFault = fs::path(CONVGATE_BINARY_DIR) / "convgate-inject-fault";
const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();

using testing::Describe;

class PerNodeCliTest : public testing::CliTest {
 protected:
  // tinycnn with `fault` injected; returns the broken model's path.
  std::string Inject(const std::string& fault, const std::string& factor = "") {
    const std::string out = (dir_ / (fault + ".onnx")).string();
    std::vector<std::string> args = {kInjectFault.string(), kTinyCnn, out, "--fault", fault};
    if (!factor.empty()) args.insert(args.end(), {"--factor", factor});
    ProcessResult r = testing::RunProcess(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return out;
  }

  // compare --per-node ... --json; the parsed report.
  json PerNode(const std::string& target, std::vector<std::string> extra, int expected_exit) {
    std::vector<std::string> args = {"compare", kTinyCnn, target, "--per-node", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, expected_exit) << Describe(r);
    json report = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << r.out;
    EXPECT_TRUE(report.contains("per_node")) << r.out;
    return report.is_discarded() ? json::object() : report["per_node"];
  }
};

TEST_F(PerNodeCliTest, CleanCopyPassesEveryNode) {
  json per_node = PerNode(kTinyCnn, {}, 0);
  EXPECT_EQ(per_node["summary"]["failed"], 0) << per_node.dump(1);
  EXPECT_EQ(per_node["summary"]["passed"], per_node["summary"]["matched"]);
  EXPECT_GT(per_node["summary"]["matched"].get<int>(), 4);
  EXPECT_TRUE(per_node["first_divergent"].is_null());
  EXPECT_TRUE(per_node["culprit"].is_null());
}

TEST_F(PerNodeCliTest, PerturbedConvIsFirstDivergentAndCulprit) {
  json per_node = PerNode(Inject("perturb-conv", "1.05"), {}, 1);
  EXPECT_EQ(per_node["first_divergent"]["node"], "Conv_conv") << per_node.dump(1);
  EXPECT_EQ(per_node["first_divergent"]["op_type"], "Conv");
  EXPECT_EQ(per_node["culprit"]["node"], "Conv_conv");
  EXPECT_EQ(per_node["culprit"]["inputs"], json({"image", "conv.weight", "conv.bias"}));
  EXPECT_GT(per_node["summary"]["failed"].get<int>(), 1);  // the error propagates downstream
  // Downstream nodes fail in the model but add (almost) nothing by themselves.
  int locally_failing = 0;
  for (const json& node : per_node["nodes"]) {
    if (node["local"].is_object() && node["local"]["computed"] == true &&
        node["local"]["passed"] == false) {
      ++locally_failing;
    }
  }
  EXPECT_EQ(locally_failing, 1) << per_node.dump(1);
  EXPECT_EQ(per_node["by_added_error"][0]["node"], "Conv_conv");
}

// A float16 model without keep-IO-types takes its inputs as float16: per-node feeds it the
// samples cast, as the comparison does, and matches its intermediates by name. A broken
// convolution in it is still the culprit (it was refused: "needs a target that takes the source's
// inputs as they are").
TEST_F(PerNodeCliTest, AFloat16InterfaceIsFedItsInputsCast) {
  for (const bool broken : {false, true}) {
    const std::string source = broken ? Inject("perturb-conv", "1.5") : kTinyCnn;
    const std::string fp16 = Path(broken ? "broken_fp16io.onnx" : "fp16io.onnx");
    ProcessResult made =
        Convgate({"convert", source, "--to", "fp16", "--param", "keep_io_types=0", "-o", fp16});
    ASSERT_EQ(made.exit_code, 0) << Describe(made);
    json per_node = PerNode(fp16, {"--dim", "batch=4", "--local-error", "all"}, broken ? 1 : 0);
    EXPECT_GT(per_node["summary"]["matched"].get<int>(), 4) << per_node.dump(1);
    if (!broken) {
      EXPECT_EQ(per_node["summary"]["failed"], 0) << per_node.dump(1);
      continue;
    }
    EXPECT_EQ(per_node["culprit"]["node"], "Conv_conv") << per_node.dump(1);
  }
}

// Issue 24: a float16 conversion keeps a node in float32 by casting around it; the Cast after it,
// fed the target's already-wrong tensor, took the blame for an upstream fault (culprit
// 'Resize__163_output_cast0'). Now each node alone is fed the source's values rounded as the
// target rounds them, a Cast the value it passes on: the perturbed convolution is the culprit,
// computed in float16 on float16 inputs, and no Cast fails by more than its own rounding.
TEST_F(PerNodeCliTest, Fp16CastsAreNeverBlamedForAnUpstreamFault) {
  const std::string broken = Inject("perturb-conv", "1.05");
  ProcessResult converted = Convgate({"convert", broken, "--to", "fp16", "--param",
                                      "op_block_list=Relu", "-o", Path("fp16.onnx")});
  ASSERT_EQ(converted.exit_code, 0) << Describe(converted);
  json per_node = PerNode(Path("fp16.onnx"), {"--local-error", "all"}, 1);
  EXPECT_EQ(per_node["culprit"]["node"], "Conv_conv") << per_node.dump(1);
  int casts = 0;
  for (const json& node : per_node["nodes"]) {
    const json& local = node["local"];
    ASSERT_TRUE(local.is_object()) << node.dump(1);
    EXPECT_EQ(local["computed"], true) << node.dump(1);
    if (node["op_type"] == "Conv") {
      // Its input is the target's Cast of 'image': fed the source's 'image', cast as that does.
      EXPECT_NE(local.dump().find("<- the source's 'image'"), std::string::npos) << local.dump(1);
      EXPECT_NE(local.dump().find("cast float32 -> float16"), std::string::npos) << local.dump(1);
    }
    if (node["op_type"] != "Cast") continue;
    ++casts;
    // Passed, or failed a float32 tolerance by float16 rounding alone.
    EXPECT_TRUE(local["passed"] == true || local["within_rounding"] == true) << node.dump(1);
  }
  EXPECT_GE(casts, 2) << per_node.dump(1);  // after Relu, and the output casts

  ProcessResult console = Convgate({"compare", kTinyCnn, Path("fp16.onnx"), "--per-node"});
  EXPECT_EQ(console.exit_code, 1) << Describe(console);
  EXPECT_NE(console.out.find("culprit: node 'Conv_conv' (Conv) -> 'conv'"), std::string::npos)
      << console.out;
}

TEST_F(PerNodeCliTest, NanNodeIsWhereNaNIsIntroduced) {
  json per_node = PerNode(Inject("nan-node"), {}, 1);
  const json& introduced = per_node["non_finite"]["introduced_at"];
  ASSERT_TRUE(introduced.is_object()) << per_node.dump(1);
  EXPECT_EQ(introduced["node"], "injected_log_Conv_conv");
  EXPECT_EQ(introduced["op_type"], "Log");
  EXPECT_TRUE(per_node["non_finite"]["inherited_from"].is_null());
  EXPECT_EQ(per_node["culprit"]["node"], "injected_log_Conv_conv");
  // The Conv's renamed output exists only in the target.
  EXPECT_EQ(per_node["unmatched_target"], json({"conv_before_log"}));
}

TEST_F(PerNodeCliTest, ConsoleNamesFirstDivergentCulpritAndNaNOrigin) {
  ProcessResult r = Convgate({"compare", kTinyCnn, Inject("nan-node"), "--per-node"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("first divergent: node 'injected_log_Conv_conv' (Log)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("culprit: node 'injected_log_Conv_conv'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NaN/Inf introduced at node 'injected_log_Conv_conv'"), std::string::npos)
      << r.out;
}

// Issue 9: tinycnn_nan's negative BatchNorm variance made the first-divergent and culprit lines say
// "max |diff| 0" (its finite elements agree) instead of naming the NaN.
TEST_F(PerNodeCliTest, NaNIsNamedOnTheFirstDivergentAndCulpritLines) {
  const std::string nan_model =
      (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn_nan.onnx").string();
  ProcessResult r = Convgate({"compare", kTinyCnn, nan_model, "--per-node"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("first divergent: node 'BatchNormalization_bn' (BatchNormalization) -> "
                       "'bn', sample 0: NaN introduced (256 of 2048 elements), source ["),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("culprit: node 'BatchNormalization_bn' (BatchNormalization) -> 'bn' "
                       "introduces NaN by itself (256 of 2048 elements), run alone on the "
                       "source's 'conv'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("NaN/Inf introduced at node 'BatchNormalization_bn' (BatchNormalization) "
                       "-> 'bn', sample 0: NaN introduced (256 of 2048 elements)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("max |diff| 0,"), std::string::npos) << r.out;
}

TEST_F(PerNodeCliTest, TinyBudgetTakesMoreRunsAndFindsTheSame) {
  const std::string target = Inject("perturb-conv", "1.05");
  json whole = PerNode(target, {"--samples", "2"}, 1);
  json chunked = PerNode(target, {"--samples", "2", "--memory-budget", "1"}, 1);
  EXPECT_EQ(whole["chunks"], 1) << whole.dump(1);
  EXPECT_EQ(chunked["chunks"], chunked["summary"]["matched"]) << chunked.dump(1);
  EXPECT_GT(chunked["runs"].get<int>(), whole["runs"].get<int>());
  EXPECT_EQ(chunked["first_divergent"], whole["first_divergent"]);
  EXPECT_EQ(chunked["culprit"], whole["culprit"]);
  EXPECT_EQ(chunked["summary"], whole["summary"]);
  // Same verdicts and counts; values agree to rounding only, because a runtime may fuse nodes
  // (Conv + BatchNormalization) whose intermediate a different chunk does not ask for.
  ASSERT_EQ(chunked["nodes"].size(), whole["nodes"].size());
  for (size_t idx = 0; idx < whole["nodes"].size(); ++idx) {
    for (size_t sample = 0; sample < 2; ++sample) {
      const json& a = whole["nodes"][idx]["samples"][sample];
      const json& b = chunked["nodes"][idx]["samples"][sample];
      EXPECT_EQ(a["passed"], b["passed"]) << idx;
      EXPECT_EQ(a["mismatches"], b["mismatches"]) << idx;
      EXPECT_NEAR(a["max_abs_error"].get<double>(), b["max_abs_error"].get<double>(), 1e-5) << idx;
    }
  }
}

TEST_F(PerNodeCliTest, StrictMakesIntermediateFailuresGate) {
  // Loose tolerances on the outputs only: they pass, the intermediates (default tolerances) fail.
  const std::string target = Inject("perturb-conv", "1.05");
  const std::vector<std::string> loose = {"--atol", "logits:10", "--atol", "probs:10"};
  json relaxed = PerNode(target, loose, 0);
  EXPECT_GT(relaxed["summary"]["failed"].get<int>(), 0) << relaxed.dump(1);
  EXPECT_EQ(relaxed["gate_failed"], false);
  std::vector<std::string> strict = loose;
  strict.push_back("--strict");
  json gated = PerNode(target, strict, 1);
  EXPECT_EQ(gated["gate_failed"], true);
}

TEST_F(PerNodeCliTest, LocalErrorNoneSkipsCulpritAllCoversEveryNode) {
  const std::string target = Inject("perturb-conv", "1.05");
  json none = PerNode(target, {"--local-error", "none"}, 1);
  EXPECT_TRUE(none["culprit"].is_null());
  EXPECT_TRUE(none["by_added_error"].empty());
  json all = PerNode(target, {"--local-error", "all"}, 1);
  EXPECT_EQ(all["by_added_error"].size(), all["summary"]["matched"].get<size_t>());
  EXPECT_EQ(all["culprit"]["node"], "Conv_conv");
}

TEST_F(PerNodeCliTest, PerNodeFlagsAreValidatedBeforeLoading) {
  ProcessResult strict_alone = Convgate({"compare", kTinyCnn, kTinyCnn, "--strict"});
  EXPECT_EQ(strict_alone.exit_code, 2);
  EXPECT_NE(strict_alone.err.find("--strict has no effect without --per-node"), std::string::npos)
      << strict_alone.err;
  ProcessResult budget =
      Convgate({"compare", kTinyCnn, kTinyCnn, "--per-node", "--memory-budget", "lots"});
  EXPECT_EQ(budget.exit_code, 2);
  EXPECT_NE(budget.err.find("'lots'"), std::string::npos) << budget.err;
  ProcessResult mode =
      Convgate({"compare", kTinyCnn, kTinyCnn, "--per-node", "--local-error", "some"});
  EXPECT_EQ(mode.exit_code, 2) << Describe(mode);
  const std::string saved = (dir_ / "ref.npz").string();
  ASSERT_EQ(Convgate({"compare", kTinyCnn, kTinyCnn, "--save-outputs", saved, "--save-inputs",
                      (dir_ / "in.npz").string()})
                .exit_code,
            0);
  ProcessResult outputs = Convgate({"compare", "--load-outputs", saved, kTinyCnn, "--load-inputs",
                                    (dir_ / "in.npz").string(), "--per-node"});
  EXPECT_EQ(outputs.exit_code, 2) << Describe(outputs);
  EXPECT_NE(outputs.err.find("--per-node needs two models"), std::string::npos) << outputs.err;
}

TEST_F(PerNodeCliTest, WritesPerNodeIntoReportFilesAndJUnitUnderStrict) {
  ProcessResult r = Convgate({"compare", kTinyCnn, Inject("perturb-conv", "1.05"), "--per-node",
                              "--strict", "--out", (dir_ / "out").string()});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  std::ifstream report_file(dir_ / "out/report.json");
  json report = json::parse(report_file, nullptr, false);
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["per_node"]["culprit"]["node"], "Conv_conv");
  std::ifstream junit_file(dir_ / "out/junit.xml");
  const std::string junit((std::istreambuf_iterator<char>(junit_file)),
                          std::istreambuf_iterator<char>());
  EXPECT_NE(junit.find("per-node / node 'Conv_conv' (Conv)"), std::string::npos) << junit;
}

}  // namespace
}  // namespace convgate
