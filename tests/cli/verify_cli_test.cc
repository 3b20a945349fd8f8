// `convgate verify` end to end on real architectures: torchvision resnet18 and mobilenet_v2
// (scripts/make_torch_fixtures.sh) converted PyTorch -> ONNX, ONNX -> float16 / opset 17 /
// ORT-optimized / OpenCV DNN, and deliberately broken conversions (convgate-inject-fault) that
// must all fail naming the output they corrupt.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
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
const std::string kFakeConverter =
    (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/fake_converter.py").string();

using testing::Describe;

class VerifyCliTest : public testing::TorchCliTest {
 protected:
  void SetUp() override {
    testing::TorchCliTest::SetUp();
    // Conversions go to a private cache: the user's stays untouched and no test sees a hit it
    // did not cause.
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }

  // verify ... --out DIR/out; returns the result.
  ProcessResult Verify(std::vector<std::string> args) {
    args.insert(args.begin(), "verify");
    args.insert(args.end(), {"--out", Out()});
    return Convgate(args);
  }

  // Writes `fault` into a copy of fixture `model` (at node `node`, or the tool's default);
  // returns the broken model's path.
  std::string Inject(const std::string& model, const std::string& fault,
                     const std::string& node = "") {
    const std::string out = (dir_ / (fault + ".onnx")).string();
    std::vector<std::string> args = {kInjectFault.string(), Fixture(model), out, "--fault", fault};
    if (!node.empty()) args.insert(args.end(), {"--node", node});
    ProcessResult r = testing::RunProcess(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return out;
  }

  std::string Out() const { return (dir_ / "out").string(); }
  json ReadJson(const std::string& file) const {
    std::ifstream in(dir_ / "out" / file);
    EXPECT_TRUE(in.good()) << "missing " << file;
    return in.good() ? json::parse(in) : json::object();
  }

  // The gate passed and verify_result.json says so, field by field.
  void ExpectPassed(const ProcessResult& r, const std::string& conversion_path) {
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const json result = ReadJson("verify_result.json");
    EXPECT_EQ(result["verify_passed"], true);
    EXPECT_EQ(result["e2e_passed"], true);
    EXPECT_TRUE(result["error"].is_null()) << result.dump(2);
    EXPECT_EQ(result["task"], "image-classification");
    EXPECT_EQ(result["conversion_path"], conversion_path);
    EXPECT_NE(result["e2e_detail"].get<std::string>().find(
                  "output check(s) sane (non-empty, no NaN/Inf, declared dtype and shape)"),
              std::string::npos)
        << result["e2e_detail"];
    // One sentence, not the report: the details are report.json's.
    EXPECT_LT(result["e2e_detail"].get<std::string>().size(), 400u) << result["e2e_detail"];
  }

  // The comparison failed (not an error) and the first failure names output 'output'.
  void ExpectComparisonFailsOnOutput(const ProcessResult& r) {
    ASSERT_EQ(r.exit_code, 1) << Describe(r);
    EXPECT_NE(r.out.find("first failure: sample 0, output 'output'"), std::string::npos) << r.out;
    // verify_result's error says why the gate failed, in the words of the first failure.
    const json result = ReadJson("verify_result.json");
    EXPECT_EQ(result["verify_passed"], false);
    EXPECT_NE(result["error"].dump().find("sample 0, output 'output'"), std::string::npos)
        << result.dump(2);
    const json report = ReadJson("report.json");
    EXPECT_EQ(report["comparison"]["verdict"], "fail");
    EXPECT_EQ(report["comparison"]["results"][0]["output"], "output");
    EXPECT_EQ(report["comparison"]["results"][0]["verdict"], "fail");
  }
};

TEST_F(VerifyCliTest, Resnet18TorchScriptToOnnxPasses) {
  ProcessResult r =
      Verify({Fixture("resnet18.pt"), "--to", "onnx", "-o", (dir_ / "r18.onnx").string()});
  ExpectPassed(r, "onnx");
  EXPECT_TRUE(fs::exists(dir_ / "r18.onnx"));
  const json report = ReadJson("report.json");
  EXPECT_NE(report["conversion_detail"].get<std::string>().find("torch.onnx.export"),
            std::string::npos)
      << report["conversion_detail"];
  EXPECT_EQ(report["comparison"]["source"]["backend"], "torch");
  EXPECT_EQ(report["comparison"]["target"]["backend"], "ort");
  EXPECT_EQ(report["conversion"]["cache"]["hit"], false);
}

TEST_F(VerifyCliTest, MobilenetV2TorchScriptToOnnxPassesOnSeveralSamples) {
  ExpectPassed(Verify({Fixture("mobilenet_v2.pt"), "--to", "onnx", "--samples", "3"}), "onnx");
  EXPECT_EQ(ReadJson("report.json")["comparison"]["results"].size(), 3u);
}

// --to fp16 is judged under the network-level float16 defaults (as --to openvino:fp16 is): the
// faithful mobilenet_v2 conversion passes by default, and fails when the user asks for float32's
// tolerances, since a float16 network moves nearly every logit by more than 1e-5.
TEST_F(VerifyCliTest, Fp16PassesUnderItsNetworkDefaultsAndFailsUnderFloat32Tolerances) {
  const std::string model = Fixture("mobilenet_v2.onnx");
  ExpectPassed(Verify({model, "--to", "fp16", "--param", "keep_io_types=1", "--samples", "2"}),
               "fp16");
  const json policy = ReadJson("report.json")["comparison"]["results"][0]["policy"];
  EXPECT_EQ(policy["atol"], 4e-2) << policy.dump();
  EXPECT_EQ(policy["min_cosine"], 0.9995) << policy.dump();
  EXPECT_NE(policy["atol_origin"].get<std::string>().find(
                "network-level float16 default of --to fp16 (float16 network"),
            std::string::npos)
      << policy.dump();

  ProcessResult strict = Verify(
      {model, "--to", "fp16", "--param", "keep_io_types=1", "--atol", "1e-5", "--rtol", "1e-3"});
  ExpectComparisonFailsOnOutput(strict);
  EXPECT_EQ(ReadJson("verify_result.json")["e2e_passed"], true);
  const json user = ReadJson("report.json")["comparison"]["results"][0]["policy"];
  EXPECT_EQ(user["atol"], 1e-5) << user.dump();
}

// An fp16 model with float16 inputs and outputs (no keep-IO-types): the comparison's float32
// inputs are cast to what the target declares, its float16 outputs are compared with the
// source's float32 ones by value, and both are recorded; --strict-dtype fails the width change.
TEST_F(VerifyCliTest, Fp16WithFloat16InputsAndOutputsIsGatedByValue) {
  const std::string model = Fixture("mobilenet_v2.onnx");
  const std::string fp16 = (dir_ / "mobilenet_v2_fp16io.onnx").string();
  ExpectPassed(
      Verify({model, "--to", "fp16", "--param", "keep_io_types=0", "--samples", "2", "-o", fp16}),
      "fp16");
  const json verify_result = ReadJson("verify_result.json");
  EXPECT_EQ(verify_result["e2e_passed"], true) << verify_result.dump();
  const json report = ReadJson("report.json");
  const std::string e2e_notes = report["e2e"]["model"]["notes"].dump();
  EXPECT_NE(e2e_notes.find("cast float32 -> float16"), std::string::npos) << e2e_notes;
  const std::string target_notes = report["comparison"]["target"]["notes"].dump();
  EXPECT_NE(target_notes.find("cast float32 -> float16"), std::string::npos) << target_notes;
  const json result = report["comparison"]["results"][0];
  EXPECT_EQ(result["verdict"], "pass") << result.dump();
  EXPECT_NE(result["notes"].dump().find("dtype changed: source float32, target float16"),
            std::string::npos)
      << result.dump();

  ProcessResult strict = Convgate({"compare", model, fp16, "--strict-dtype", "--samples", "2"});
  EXPECT_EQ(strict.exit_code, 1) << Describe(strict);
  EXPECT_NE(strict.out.find("dtype mismatch: source float32, target float16"), std::string::npos)
      << strict.out;

  // Loaded float32 samples are cast for the target's own run too (it once read the file again,
  // uncast: "is float32, the model wants float16", exit 3).
  const std::string samples = (dir_ / "samples.npz").string();
  ASSERT_EQ(Convgate({"run", model, "--samples", "2", "--save-inputs", samples}).exit_code, 0);
  ProcessResult loaded =
      Verify({model, "--to", "fp16", "--param", "keep_io_types=0", "--load-inputs", samples});
  EXPECT_EQ(loaded.exit_code, 0) << Describe(loaded);
  EXPECT_EQ(ReadJson("verify_result.json")["e2e_passed"], true);
}

// Path B of the verify-conversion gate: ONNX -> OpenVINO IR through openvino.convert_model, run
// on the openvino backend (the default for .xml). Float32 weights are judged under the float32
// defaults; float16 weights under the network-level float16 ones, which the report names.
TEST_F(VerifyCliTest, ToOpenvinoPassesUnderEachPrecisionsDefaults) {
  for (const std::string kind : {"openvino", "openvino:fp16"}) {
    std::filesystem::remove_all(Out());
    ProcessResult r = Verify({Fixture("resnet18.onnx"), "--to", kind});
    ExpectPassed(r, "convert_model");
    const json report = ReadJson("report.json");
    EXPECT_EQ(report["comparison"]["target"]["backend"], "openvino") << kind;
    const std::string origin = report["comparison"]["results"][0]["policy"]["atol_origin"];
    EXPECT_NE(origin.find(kind == "openvino" ? "float32 default" : "network-level float16"),
              std::string::npos)
        << kind << ": " << origin;
  }
}

TEST_F(VerifyCliTest, OpsetUpgradeOfAnOlderExportPasses) {
  const std::string upgraded = (dir_ / "r18_opset17.onnx").string();
  ExpectPassed(Verify({Fixture("resnet18_bn_opset13.onnx"), "--to", "opset:17", "-o", upgraded}),
               "opset");
  ProcessResult inspect = Convgate({"inspect", upgraded, "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  const json opsets = json::parse(inspect.out)["opsets"];
  ASSERT_FALSE(opsets.empty());
  EXPECT_EQ(opsets[0]["version"], 17) << opsets.dump();
}

TEST_F(VerifyCliTest, OrtOptimizedPasses) {
  ExpectPassed(Verify({Fixture("resnet18.onnx"), "--to", "ort-optimized:all"}), "ort-optimized");
}

// --no-cache without -o: the conversion is made in a temporary folder that lasts the verify (it
// used to be a usage error after the source had been loaded).
TEST_F(VerifyCliTest, NoCacheWithoutAnOutputConvertsIntoATemporaryFolder) {
  ExpectPassed(Verify({Fixture("resnet18_bn_opset13.onnx"), "--to", "opset:17", "--no-cache"}),
               "opset");
  const json report = ReadJson("report.json");
  EXPECT_TRUE(report["conversion"]["cache"]["path"].is_null()) << report["conversion"].dump(1);
  const std::string target = report["target"];
  EXPECT_FALSE(fs::exists(target)) << target << " outlived the verify";
}

TEST_F(VerifyCliTest, OpenCvDnnRunsResnet18AndRefusesMobilenetV2Clearly) {
  ExpectPassed(Verify({Fixture("resnet18.onnx"), "--to", "opencv"}), "opencv");
  EXPECT_EQ(ReadJson("report.json")["comparison"]["target"]["backend"], "opencv");

  // OpenCV 4.6's importer cannot parse opset-11+ Clip (ReLU6 in mobilenet_v2): a load error, not
  // a crash and not a comparison failure.
  ProcessResult r = Verify({Fixture("mobilenet_v2.onnx"), "--to", "opencv"});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("cannot load this model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("export at opset 10 or lower"), std::string::npos) << r.err;
  const json result = ReadJson("verify_result.json");
  EXPECT_EQ(result["verify_passed"], false);
  EXPECT_EQ(result["e2e_passed"], false);
  EXPECT_NE(result["error"].get<std::string>().find("cannot load this model"), std::string::npos)
      << result.dump(2);
}

TEST_F(VerifyCliTest, AFailingExternalConverterIsAConversionError) {
  ProcessResult r = Verify({Fixture("mobilenet_v2.onnx"), "--converter",
                            "/usr/bin/python3 " + kFakeConverter + " fail {src} {out}"});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  const json result = ReadJson("verify_result.json");
  EXPECT_EQ(result["verify_passed"], false);
  EXPECT_EQ(result["e2e_passed"], false);
  EXPECT_EQ(result["conversion_path"], "external") << result.dump(2);
  EXPECT_FALSE(result["error"].is_null());
}

// Each broken conversion must fail the comparison of output 'output' (and only the NaN one the
// end-to-end run as well).
struct FaultCase {
  std::string fault;
  std::string model;
};
void PrintTo(const FaultCase& c, std::ostream* os) { *os << c.fault << " on " << c.model; }

class VerifyFaultTest : public VerifyCliTest, public ::testing::WithParamInterface<FaultCase> {};

TEST_P(VerifyFaultTest, TheBrokenConversionFailsNamingTheOutput) {
  const FaultCase& c = GetParam();
  const std::string broken = Inject(c.model, c.fault);
  ProcessResult r = Verify({Fixture(c.model), "--target", broken});
  ExpectComparisonFailsOnOutput(r);
  EXPECT_EQ(ReadJson("verify_result.json")["e2e_passed"], c.fault != "nan-node");
}

// The same broken models on OpenVINO's CPU plugin (the openvino backend) fail the same way.
TEST_P(VerifyFaultTest, TheBrokenConversionFailsThroughOpenvinoToo) {
  const FaultCase& c = GetParam();
  const std::string broken = Inject(c.model, c.fault);
  ProcessResult r = Verify({Fixture(c.model), "--target", broken, "--target-backend", "openvino"});
  ExpectComparisonFailsOnOutput(r);
  EXPECT_EQ(ReadJson("report.json")["comparison"]["target"]["backend"], "openvino");
}

INSTANTIATE_TEST_SUITE_P(Faults, VerifyFaultTest,
                         ::testing::Values(FaultCase{"perturb-conv", "mobilenet_v2.onnx"},
                                           FaultCase{"swap-channels", "mobilenet_v2.onnx"},
                                           FaultCase{"drop-bias", "resnet18.onnx"},
                                           FaultCase{"norm-epsilon", "resnet18_bn_opset13.onnx"},
                                           FaultCase{"nan-node", "mobilenet_v2.onnx"}),
                         [](const auto& info) {
                           std::string name = info.param.fault;
                           std::erase(name, '-');
                           return name;
                         });

// repair finds the nodes fp16-overflow made overflow (the Conv scaled by 1e5, the Relu after it
// and the Conv that scales back) and nothing else: the repaired model passes, and its report
// names them with their op types and the run that blamed each.
TEST_F(VerifyCliTest, RepairKeepsExactlyTheOverflowingNodesInFloat32) {
  const std::string rescaled = Inject("resnet18.onnx", "fp16-overflow");
  const std::string repaired = (dir_ / "repaired.onnx").string();
  ProcessResult r = Convgate(
      {"repair", rescaled, "--to", "fp16", "-o", repaired, "--samples", "4", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("REPAIRED"), std::string::npos) << r.out;
  const json repair = ReadJson("report.json")["repair"];
  std::vector<std::string> kept;
  for (const json& node : repair["kept_float32"]) kept.push_back(node["node"]);
  EXPECT_EQ(kept, (std::vector<std::string>{"/model/layer1/layer1.0/conv1/Conv",
                                            "/model/layer1/layer1.0/relu/Relu",
                                            "/model/layer1/layer1.0/conv2/Conv"}))
      << repair.dump(2);
  EXPECT_EQ(repair["kept_float32"][0]["op_type"], "Conv");
  EXPECT_EQ(repair["runs"], 4) << repair.dump(2);
  EXPECT_EQ(ReadJson("verify_result.json")["verify_passed"], true);
  // The repaired model passes on its own, under the same gate.
  ProcessResult again =
      Convgate({"compare", rescaled, repaired, "--samples", "4", "--policy",
                (fs::path(CONVGATE_SOURCE_DIR) / "examples/policies/fp16-network.yaml").string()});
  EXPECT_EQ(again.exit_code, 0) << Describe(again);
  // A budget too small to find all three says so and fails.
  ProcessResult short_budget =
      Convgate({"repair", rescaled, "--to", "fp16", "-o", (dir_ / "partial.onnx").string(),
                "--samples", "4", "--max-runs", "2"});
  EXPECT_EQ(short_budget.exit_code, 1) << Describe(short_budget);
  EXPECT_NE(short_budget.out.find("--max-runs 2 reached"), std::string::npos) << short_budget.out;
}

// The rescaling by 1e-6 instead: the first Conv's weights (~5e-8) underflow float16, its output
// (~1e-6) passes any absolute tolerance however wrong it is, and only the next Conv, scaling by
// 1e6, shows the error. Kept in float32 for its own overflow first, that Conv still fails: repair
// walks up its inputs (Relu, then the underflowing Conv) instead of keeping every later node.
TEST_F(VerifyCliTest, RepairWalksUpFromAKeptNodeThatStillFails) {
  const std::string rescaled = (dir_ / "underflow.onnx").string();
  ProcessResult made =
      testing::RunProcess({kInjectFault.string(), Fixture("resnet18.onnx"), rescaled, "--fault",
                           "fp16-overflow", "--factor", "1e-6"});
  ASSERT_EQ(made.exit_code, 0) << Describe(made);
  ProcessResult r = Convgate({"repair", rescaled, "--to", "fp16", "-o",
                              (dir_ / "repaired.onnx").string(), "--samples", "4", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json repair = ReadJson("report.json")["repair"];
  std::vector<std::string> kept;
  for (const json& node : repair["kept_float32"]) kept.push_back(node["node"]);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"/model/layer1/layer1.0/conv1/Conv",
                                            "/model/layer1/layer1.0/conv2/Conv",
                                            "/model/layer1/layer1.0/relu/Relu"}))
      << repair.dump(2);
  EXPECT_EQ(repair["runs"], 4) << repair.dump(2);
}

// fp16-overflow is exact in float32 (the source and the broken model agree) and overflows only
// once converted: verify --to fp16 must catch the introduced Inf under its float16 defaults.
TEST_F(VerifyCliTest, AnFp16OverflowIsCaughtAsIntroducedInfinity) {
  const std::string rescaled = Inject("resnet18.onnx", "fp16-overflow");
  ProcessResult same = Convgate({"compare", Fixture("resnet18.onnx"), rescaled, "--rtol", "1e-2"});
  EXPECT_EQ(same.exit_code, 0) << "the rescaling must be exact enough in float32\n"
                               << Describe(same);
  ProcessResult r = Verify({rescaled, "--to", "fp16", "--param", "keep_io_types=1"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(ReadJson("report.json")["comparison"]["results"][0]["policy"]["atol_origin"]
                .get<std::string>()
                .find("network-level float16 default of --to fp16"),
            std::string::npos);
  EXPECT_EQ(ReadJson("verify_result.json")["verify_passed"], false);
  const json report = ReadJson("report.json");
  const json& non_finite = report["comparison"]["results"][0]["stats"]["non_finite"];
  // Counts that are 0 are left out (schema 2).
  EXPECT_GT(non_finite.value("introduced_nan", int64_t{0}) +
                non_finite.value("introduced_inf", int64_t{0}),
            0)
      << report["comparison"]["results"][0].dump(2).substr(0, 3000);
}

// Per-node localisation and reduce on a real architecture: a fault in a Conv deep inside
// mobilenet_v2 (block 7 of 17) is blamed on that Conv, not on the nodes downstream that inherit
// its error, and the one-node reproducer fails on its own.
TEST_F(VerifyCliTest, AFaultDeepInMobilenetV2IsReducedToItsNode) {
  const std::string conv = "/model/features/features.7/conv/conv.1/conv.1.0/Conv";
  for (const std::string fault : {"perturb-conv", "nan-node"}) {
    SCOPED_TRACE(fault);
    const std::string broken = Inject("mobilenet_v2.onnx", fault, conv);
    const fs::path folder = dir_ / ("reduce-" + fault);
    ProcessResult r = Convgate({"reduce", Fixture("mobilenet_v2.onnx"), broken, "-o",
                                folder.string(), "--memory-budget", "16MiB"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    std::ifstream in(folder / "report.json");
    const json report = json::parse(in);
    EXPECT_EQ(report["node"]["name"], fault == "nan-node" ? "injected_log_" + conv : conv)
        << report["node"].dump();
    EXPECT_NE(report["reason"].get<std::string>().find("culprit"), std::string::npos);
    EXPECT_EQ(report["reproduces"], true);
    const json& per_node = report["comparison"]["per_node"];
    EXPECT_GT(per_node["chunks"].get<int>(), 1) << "a 16 MiB budget must take several chunks";
    ::setenv("CONVGATE", Binary().c_str(), 1);
    ProcessResult repro = testing::RunProcess({(folder / "repro.sh").string()});
    EXPECT_EQ(repro.exit_code, 1) << Describe(repro);
  }
}

}  // namespace
}  // namespace convgate
