// int8 quantization end to end on the real binary: `verify --to int8-dynamic` and `--to
// int8-static` (ONNX Runtime's quantization in the venv, static calibrated on the gate's own
// inputs) pass under the quantization profile, with a top-1 agreement check on each classifier
// output; a corrupted quantization scale fails it; bad parameters are usage errors.
#include <gtest/gtest.h>
#include <stdlib.h>

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
