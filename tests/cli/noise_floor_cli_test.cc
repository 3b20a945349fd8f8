// Verdicts on real arithmetic, end to end with the real binary: the noise floor (compare
// --calibrate, verify by default) tells a faithful conversion's rounding from an injected fault
// where float32's fixed defaults cannot; cosine and SNR are undefined, never failures, for a
// source within atol of zero; a target computing in float16 is judged as one whoever converted
// it. The models come from tools/make_noise_models.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"
#include "testing/subprocess.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;
using Args = std::vector<std::string>;

const fs::path kModels = fs::path(CONVGATE_BINARY_DIR) / "examples";

std::string Model(const std::string& name) { return (kModels / name).string(); }

class NoiseFloorCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    // The calibration cache is this test's own, so a first run always measures.
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }

  // deepcnn against `target` on [0, 255] inputs, as a detector is fed.
  ProcessResult CompareDeep(const std::string& target, const Args& extra) {
    Args args{
        "compare", Model("deepcnn.onnx"), Model(target), "--val-range", "[0,255)", "--samples",
        "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Convgate(args);
  }

  json ReadJson(const fs::path& path) const {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "missing " << path;
    return json::parse(in);
  }
};

// The faithful conversion (BatchNorm folded in double) fails float32's fixed defaults: ONNX
// Runtime's own optimization levels differ by as much. Calibrated, it passes, and the console
// and report say where each tolerance came from and how far each error is from its floor.
TEST_F(NoiseFloorCliTest, FaithfulConversionPassesOnlyAgainstItsFloor) {
  const ProcessResult fixed = CompareDeep("deepcnn_folded.onnx", {});
  EXPECT_EQ(fixed.exit_code, 1) << "float32 defaults no longer flag this conversion, so the "
                                   "test proves nothing: "
                                << Describe(fixed);
  const fs::path out = dir_ / "calibrated";
  const ProcessResult calibrated =
      CompareDeep("deepcnn_folded.onnx", {"--calibrate", "--out", out.string()});
  ASSERT_EQ(calibrated.exit_code, 0) << Describe(calibrated);
  EXPECT_NE(calibrated.out.find("floor    measured in"), std::string::npos) << calibrated.out;
  EXPECT_NE(calibrated.out.find("ONNX Runtime optimization disabled vs extended"),
            std::string::npos)
      << calibrated.out;
  EXPECT_NE(calibrated.out.find("x floor"), std::string::npos) << calibrated.out;
  const json report = ReadJson(out / "report.json");
  EXPECT_EQ(report["calibration"]["status"], "measured");
  EXPECT_EQ(report["calibration"]["factor"], 8.0);
  const json& floors = report["policy"]["noise_floors"];
  ASSERT_TRUE(floors.contains("logits")) << floors.dump();
  EXPECT_GT(floors["logits"]["max_abs"].get<double>(), 0.0);
  for (const json& result : report["results"]) {
    ASSERT_TRUE(result.contains("noise_floor_multiple")) << result.dump();
    EXPECT_LE(result["noise_floor_multiple"].get<double>(), 8.0) << result.dump();
  }
  EXPECT_NE(
      report["results"][0]["policy"]["atol_origin"].get<std::string>().find("x the noise floor"),
      std::string::npos);
  // The same model and inputs again: the floors come from the cache.
  const ProcessResult again = CompareDeep("deepcnn_folded.onnx", {"--calibrate"});
  EXPECT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_NE(again.out.find("floor    cached"), std::string::npos) << again.out;
  // Other inputs are other floors.
  const ProcessResult reseeded = CompareDeep("deepcnn_folded.onnx", {"--calibrate", "--seed", "9"});
  EXPECT_NE(reseeded.out.find("floor    measured in"), std::string::npos) << reseeded.out;
}

// Every injected fault stays far above the floor: the calibrated gate fails each, naming how many
// times its floor the error is.
TEST_F(NoiseFloorCliTest, EveryInjectedFaultFailsAboveTheFloor) {
  for (const std::string fault : {"weight", "bias", "channels", "epsilon"}) {
    const fs::path out = dir_ / fault;
    const ProcessResult result =
        CompareDeep("deepcnn_fault_" + fault + ".onnx", {"--calibrate", "--out", out.string()});
    EXPECT_EQ(result.exit_code, 1) << fault << ": " << Describe(result);
    const json report = ReadJson(out / "report.json");
    double worst = 0.0;
    for (const json& r : report["results"]) {
      worst = std::max(worst, r.value("noise_floor_multiple", 0.0));
    }
    EXPECT_GT(worst, 8.0) << fault;
  }
}

// verify measures the floor unless told not to.
TEST_F(NoiseFloorCliTest, VerifyCalibratesByDefault) {
  const Args args{
      "verify",  Model("deepcnn.onnx"), "--target", Model("deepcnn_folded.onnx"), "--val-range",
      "[0,255)", "--samples",           "2"};
  const ProcessResult calibrated = Convgate(args);
  EXPECT_EQ(calibrated.exit_code, 0) << Describe(calibrated);
  Args off = args;
  off.push_back("--no-calibrate");
  const ProcessResult fixed = Convgate(off);
  EXPECT_EQ(fixed.exit_code, 1) << Describe(fixed);
  EXPECT_EQ(fixed.out.find("floor    "), std::string::npos) << fixed.out;
}

// A detector map of ~1e-6 that float16 rounds to (nearly) 0: cosine and SNR are undefined, so the
// float16 network profile's floors do not fail it; a source output constant on every sample is a
// warning about the inputs.
TEST_F(NoiseFloorCliTest, NearZeroOutputsHaveNoCosineToFail) {
  const fs::path out = dir_ / "o";
  const ProcessResult result = Convgate({"verify", Model("zeromap.onnx"), "--to", "fp16", "--out",
                                         out.string(), "--cache-dir", (dir_ / "conv").string()});
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(result.out.find("cosine and SNR undefined: max |source|"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("warning: output 'gate' is 0 on every element"), std::string::npos)
      << result.out;
  const json report = ReadJson(out / "report.json");
  const json& comparison = report["comparison"];
  bool undefined = false;
  for (const json& r : comparison["results"]) {
    if (r["output"] == "map") {
      undefined = r.value("floors_undefined", "").find("<= atol") != std::string::npos;
    }
  }
  EXPECT_TRUE(undefined) << comparison["results"].dump();
  // 'gate' is 0 everywhere; 'map' is not constant but within atol of 0 on every sample: both say
  // the generated inputs may not reach what the model detects.
  ASSERT_EQ(comparison["warnings"].size(), 2u) << comparison["warnings"].dump();
  EXPECT_NE(comparison["warnings"][1].get<std::string>().find("'map' stays within atol"),
            std::string::npos)
      << comparison["warnings"].dump();
}

// A float16 model that convgate did not convert (here converted first, then compared) is judged
// under the same network-level float16 profile as `verify --to fp16`, the policy saying why.
TEST_F(NoiseFloorCliTest, Float16TargetIsJudgedAsOneWhoeverConvertedIt) {
  const fs::path fp16 = dir_ / "tinycnn_fp16.onnx";
  const ProcessResult converted =
      Convgate({"convert", Model("tinycnn.onnx"), "--to", "fp16", "-o", fp16.string(), "--param",
                "keep_io_types=1", "--no-cache"});
  ASSERT_EQ(converted.exit_code, 0) << Describe(converted);
  const fs::path out = dir_ / "o";
  const ProcessResult compared =
      Convgate({"compare", Model("tinycnn.onnx"), fp16.string(), "--out", out.string()});
  EXPECT_EQ(compared.exit_code, 0) << Describe(compared);
  const json report = ReadJson(out / "report.json");
  const std::string origin = report["policy"]["conversion_defaults"]["origin"];
  EXPECT_NE(origin.find("the target computes in float16"), std::string::npos) << origin;
  EXPECT_NE(origin.find("floating weights are float16"), std::string::npos) << origin;
  // A float32 target keeps float32's defaults.
  const fs::path plain = dir_ / "plain";
  const ProcessResult fp32 = Convgate(
      {"compare", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"), "--out", plain.string()});
  EXPECT_EQ(fp32.exit_code, 0) << Describe(fp32);
  EXPECT_TRUE(ReadJson(plain / "report.json")["policy"]["conversion_defaults"].is_null());
}

}  // namespace
}  // namespace convgate
