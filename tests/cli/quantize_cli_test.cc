// int8 quantization end to end on the real binary: `verify --to int8-dynamic` and `--to
// int8-static` (ONNX Runtime's quantization in the venv, static calibrated on the gate's own
// inputs) pass under the quantization profile, with a top-1 agreement check on each classifier
// output; a corrupted quantization scale fails it; bad parameters are usage errors.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cancellation_model.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();
const fs::path kInjectFault = fs::path(CONVGATE_BINARY_DIR) / "convgate-inject-fault";

class QuantizeCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    testing::CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("CONVGATE_CACHE_DIR");
    testing::CliTest::TearDown();
  }

  ProcessResult Verify(const std::string& kind, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"verify", kTinyCnn,    "--to",      kind,
                                     "--dim",  "batch=8",   "--samples", "4",
                                     "--out",  Path("out"), "-o",        Path(kind + ".onnx")};
    args.insert(args.end(), extra.begin(), extra.end());
    return Convgate(args);
  }

  json Report() const {
    std::ifstream in(dir_ / "out" / "report.json");
    return json::parse(in);
  }
};

void ExpectQuantizationProfile(const json& report) {
  const json& comparison = report["comparison"];
  const std::string origin = comparison["policy"]["conversion_defaults"]["origin"];
  EXPECT_NE(origin.find("quantization profile"), std::string::npos) << origin;
  EXPECT_EQ(comparison["results"][0]["policy"]["mismatch_ppm"], 1e6);
  // One top-1 check per classifier output, judged and passed.
  int top1 = 0;
  for (const json& agreement : comparison["agreements"]) {
    for (const json& check : agreement["checks"]) {
      EXPECT_EQ(check["verdict"], "pass") << check.dump();
      EXPECT_NE(check["check"].get<std::string>().find(":top1>=0.99"), std::string::npos);
      ++top1;
    }
  }
  EXPECT_EQ(top1, 2) << comparison["agreements"].dump();
}

TEST_F(QuantizeCliTest, DynamicInt8PassesTheQuantizationProfile) {
  ProcessResult r = Verify("int8-dynamic");
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("quantized ops:"), std::string::npos) << r.out;
  ExpectQuantizationProfile(Report());
}

TEST_F(QuantizeCliTest, StaticInt8CalibratesOnTheGatesInputsAndPasses) {
  ProcessResult r = Verify("int8-static");
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("calibrated on 4 sample(s)"), std::string::npos) << r.out;
  ExpectQuantizationProfile(Report());
}

TEST_F(QuantizeCliTest, ACorruptedScaleFailsTheProfile) {
  ProcessResult made = Verify("int8-static");
  ASSERT_EQ(made.exit_code, 0) << Describe(made);
  const std::string broken = Path("broken.onnx");
  ProcessResult injected = testing::RunProcess(
      {kInjectFault.string(), Path("int8-static.onnx"), broken, "--fault", "quant-scale"});
  ASSERT_EQ(injected.exit_code, 0) << Describe(injected);
  // Judged as the conversion would be: the same profile, through verify --target... with the
  // profile's floors given as flags (a given target carries no conversion kind).
  ProcessResult r = Convgate({"compare", kTinyCnn, broken, "--dim", "batch=8", "--samples", "4",
                              "--mismatch-ppm", "1000000", "--min-cosine", "0.99", "--min-snr-db",
                              "20", "--agreement", "logits:top1>=0.99"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
}

// compare of a source and its int8 model, no conversion said: the pair is recognised from the
// target's quantization ops and judged by the quantization profile, not float32's elementwise
// tolerances. Per-node compares each tensor with what the QDQ target's consumers read (its
// DequantizeLinear output) and runs each quantized layer with its QuantizeLinear/DequantizeLinear
// on the source's tensors, so a corrupted scale is blamed on the layer that reads it.
TEST_F(QuantizeCliTest, PerNodeNamesTheLayerWhoseQuantizationIsBroken) {
  ProcessResult made = Verify("int8-static");
  ASSERT_EQ(made.exit_code, 0) << Describe(made);
  const std::vector<std::string> per_node = {"--dim", "batch=8",    "--samples",
                                             "4",     "--per-node", "--local-error",
                                             "all",   "--out",      Path("pn")};
  auto compare = [&](const std::string& target) {
    std::vector<std::string> args = {"compare", kTinyCnn, target};
    args.insert(args.end(), per_node.begin(), per_node.end());
    return Convgate(args);
  };
  auto report = [&] {
    std::ifstream in(dir_ / "pn" / "report.json");
    return json::parse(in);
  };
  ProcessResult clean = compare(Path("int8-static.onnx"));
  ASSERT_EQ(clean.exit_code, 0) << Describe(clean);
  EXPECT_NE(clean.out.find("quantization profile (the target quantizes:"), std::string::npos)
      << clean.out;
  json nodes = report()["per_node"]["nodes"];
  int dequantized = 0;
  for (const json& node : nodes) {
    EXPECT_EQ(node["status"], "passed") << node.dump();
    const std::string target = node.value("target_tensor", "");
    if (!target.empty()) {
      EXPECT_EQ(target, node["tensor"].get<std::string>() + "_DequantizeLinear_Output");
      ++dequantized;
    }
  }
  EXPECT_GE(dequantized, 2) << nodes.dump();

  const std::string broken = Path("broken.onnx");
  ProcessResult injected = testing::RunProcess(
      {kInjectFault.string(), Path("int8-static.onnx"), broken, "--fault", "quant-scale"});
  ASSERT_EQ(injected.exit_code, 0) << Describe(injected);
  // {"change": "bn.bias_DequantizeLinear: scale '...' times 4"}: the DequantizeLinear corrupted.
  const std::string change = json::parse(injected.out)["change"];
  const std::string corrupted = change.substr(0, change.find(':'));
  ProcessResult r = compare(broken);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  const json result = report()["per_node"];
  EXPECT_TRUE(result["quantized"].get<bool>());
  ASSERT_FALSE(result["by_added_error"].empty()) << result.dump();
  const int worst = result["by_added_error"][0]["index"];
  const json& blamed = result["nodes"][worst];
  const std::vector<std::string> run_with = blamed["local"]["run_with"];
  EXPECT_NE(std::find(run_with.begin(), run_with.end(), corrupted), run_with.end())
      << corrupted << " not run with the worst layer " << blamed.dump();
  EXPECT_FALSE(blamed["local"]["passed"].get<bool>()) << blamed.dump();
  EXPECT_EQ(result["culprit"]["index"], worst) << result.dump();
  EXPECT_NE(r.out.find("error added by each quantized layer (lowest SNR first"), std::string::npos)
      << r.out;
}

// int8 loses x in (x + 1000) - 1000 (its steps are about 4 there). repair --to int8-static keeps
// the Sub first (the culprit: it fails run alone with the quantization around it), then, since
// the Sub kept in float32 still reads 'shifted' quantized, the Add writing it; the MatMul stays
// int8.
TEST_F(QuantizeCliTest, RepairKeepsTheCancellationInFloat32) {
  const std::string model = testing::WriteCancellationModel(dir_ / "cancel.onnx");
  ProcessResult plain = Convgate({"verify", model, "--to", "int8-static", "--samples", "4"});
  EXPECT_EQ(plain.exit_code, 1) << Describe(plain);
  const std::string repaired = Path("repaired.onnx");
  ProcessResult r = Convgate({"repair", model, "--to", "int8-static", "-o", repaired, "--samples",
                              "4", "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("REPAIRED: the int8 model"), std::string::npos) << r.out;
  const json repair = Report()["repair"];
  std::vector<std::string> kept;
  for (const json& node : repair["kept_float32"]) kept.push_back(node["node"]);
  EXPECT_EQ(kept, (std::vector<std::string>{"unshift", "shift"})) << r.out;
  EXPECT_EQ(repair["runs"], 3) << repair.dump(2);
  ProcessResult again = Convgate({"compare", model, repaired, "--samples", "4"});
  EXPECT_EQ(again.exit_code, 0) << Describe(again);
  // A time budget spent stops the search before the next run and says what would come next.
  ProcessResult budget = Convgate({"repair", model, "--to", "int8-static", "-o", Path("b.onnx"),
                                   "--samples", "4", "--max-seconds", "0.001"});
  EXPECT_EQ(budget.exit_code, 1) << Describe(budget);
  EXPECT_NE(budget.out.find("NOT REPAIRED: --max-seconds 0.001 spent after 1 run(s) (next: Sub "
                            "'unshift'"),
            std::string::npos)
      << budget.out;
  // A block list naming no node is refused, not ignored as ONNX Runtime would.
  ProcessResult misspelt = Convgate({"convert", model, "--to", "int8-dynamic", "--param",
                                     "node_block_list=unshfit", "-o", Path("m.onnx")});
  EXPECT_NE(misspelt.exit_code, 0);
  EXPECT_NE(misspelt.err.find("unshfit"), std::string::npos) << Describe(misspelt);
}

TEST_F(QuantizeCliTest, BadParametersAreUsageErrors) {
  ProcessResult calibration =
      Convgate({"convert", kTinyCnn, "--to", "int8-static", "-o", Path("s.onnx")});
  EXPECT_EQ(calibration.exit_code, 2) << Describe(calibration);
  EXPECT_NE(calibration.err.find("calibration=inputs.npz"), std::string::npos) << calibration.err;
  ProcessResult dynamic = Convgate({"convert", kTinyCnn, "--to", "int8-dynamic", "-o",
                                    Path("d.onnx"), "--param", "calibration=x.npz"});
  EXPECT_EQ(dynamic.exit_code, 2) << Describe(dynamic);
  ProcessResult type = Convgate({"convert", kTinyCnn, "--to", "int8-dynamic", "-o", Path("d.onnx"),
                                 "--param", "weight_type=int4"});
  EXPECT_EQ(type.exit_code, 2) << Describe(type);
  EXPECT_NE(type.err.find("qint8, quint8"), std::string::npos) << type.err;
}

}  // namespace
}  // namespace convgate
