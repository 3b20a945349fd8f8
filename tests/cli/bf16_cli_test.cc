// `--to bf16` end to end: torchvision models converted to bfloat16 pass under the network-level
// bfloat16 profile (run emulated by the ONNX Runtime backend: its CPU provider has no bfloat16
// kernels), with and without keep_io_types; a model whose result cancels catastrophically in
// bfloat16 fails, and `repair --to bf16` keeps exactly the two nodes of the cancellation.
#include <gtest/gtest.h>

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

class Bf16CliTest : public testing::TorchCliTest {
 protected:
  json ReadJson(const std::string& name) const {
    std::ifstream in(dir_ / "out" / name);
    EXPECT_TRUE(in.good()) << name;
    return json::parse(in, nullptr, false);
  }
  std::string Out() const { return (dir_ / "out").string(); }

  std::string CancellationModel() { return testing::WriteCancellationModel(dir_ / "cancel.onnx"); }
};

TEST_F(Bf16CliTest, TorchvisionModelsPassUnderTheBfloat16NetworkProfile) {
  for (const std::string model : {"resnet18.onnx", "mobilenet_v2.onnx"}) {
    ProcessResult r = Convgate({"verify", Fixture(model), "--to", "bf16", "--samples", "4", "-o",
                                (dir_ / ("bf16_" + model)).string(), "--out", Out()});
    ASSERT_EQ(r.exit_code, 0) << model << ": " << Describe(r);
    const json report = ReadJson("report.json");
    const std::string origin =
        report["comparison"]["results"][0]["policy"]["atol_origin"].get<std::string>();
    EXPECT_NE(origin.find("network-level bfloat16 default of --to bf16"), std::string::npos)
        << origin;
    // Run emulated, and said so.
    EXPECT_NE(r.out.find("bfloat16 emulated"), std::string::npos) << r.out;
    // Convs have no bfloat16 form at opset 17: kept in float32, saying why.
    EXPECT_NE(r.out.find("stay float32: ONNX defines no bfloat16 form of them at opset 17"),
              std::string::npos)
        << r.out;
  }
  // bfloat16 inputs and outputs: the float32 samples are cast to what the target declares, and
  // the bfloat16 output is compared by value.
  ProcessResult io = Convgate({"verify", Fixture("mobilenet_v2.onnx"), "--to", "bf16", "--param",
                               "keep_io_types=0", "--samples", "2"});
  EXPECT_EQ(io.exit_code, 0) << Describe(io);
  EXPECT_NE(io.out.find("cast float32 -> bfloat16 (the target declares bfloat16)"),
            std::string::npos)
      << io.out;
}

TEST_F(Bf16CliTest, RepairKeepsTheCancellationInFloat32) {
  const std::string model = CancellationModel();
  ProcessResult plain = Convgate({"verify", model, "--to", "bf16", "--samples", "4"});
  EXPECT_EQ(plain.exit_code, 1) << Describe(plain);
  const std::string repaired = (dir_ / "repaired.onnx").string();
  ProcessResult r =
      Convgate({"repair", model, "--to", "bf16", "-o", repaired, "--samples", "4", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("REPAIRED: the bfloat16 model"), std::string::npos) << r.out;
  const json repair = ReadJson("report.json")["repair"];
  std::vector<std::string> kept;
  for (const json& node : repair["kept_float32"]) kept.push_back(node["node"]);
  EXPECT_EQ(repair["runs"], 3) << repair.dump(2);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"shift", "unshift"})) << r.out;
  ProcessResult again = Convgate({"compare", model, repaired, "--samples", "4"});
  EXPECT_EQ(again.exit_code, 0) << Describe(again);
}

}  // namespace
}  // namespace convgate
