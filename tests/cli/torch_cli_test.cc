// PyTorch -> ONNX end to end through the real `convgate` binary: torchvision resnet18 and
// mobilenet_v2 (seeded random weights, calibrated and randomized BatchNorm), exported once to
// TorchScript and ONNX by scripts/make_torch_fixtures.sh into the fixture cache.
//
// Default tolerances (float32: atol 1e-5, rtol 1e-3) hold here. Measured with uniform [0, 1)
// inputs, 32 images per model (--samples 16 --dim batch=2, --threads 1 and 2): libtorch 1.13 vs
// ONNX Runtime 1.29 differ by at most 4.5e-6 (resnet18, logits within +-3) and 8.5e-6
// (mobilenet_v2, logits within +-2); every element passes with atol 1.2e-6 and 5.1e-6
// respectively at rtol 1e-3, a 2x margin for mobilenet_v2. N(0, 1) inputs, far outside what the
// BatchNorm statistics were calibrated on, push resnet18's logits to +-80 and its largest
// difference to 7.6e-5, which rtol 1e-3 still covers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/io/npz.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;

using testing::Describe;

class TorchCliTest : public testing::TorchCliTest {
 protected:
  std::string Out() const { return (dir_ / "out").string(); }
  json ReadReport() const {
    std::ifstream in(dir_ / "out" / "report.json");
    EXPECT_TRUE(in.good()) << "missing report.json";
    return json::parse(in);
  }

  // compare SOURCE.pt TARGET.onnx on 2 samples of batch 2 under default tolerances.
  void ExpectTorchScriptMatchesOnnx(const std::string& model) {
    ProcessResult r = Convgate({"compare", Fixture(model + ".pt"), Fixture(model + ".onnx"),
                                "--samples", "2", "--dim", "batch=2", "--out", Out()});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const json report = ReadReport();
    EXPECT_EQ(report["verdict"], "pass");
    EXPECT_EQ(report["source"]["backend"], "torch");
    EXPECT_EQ(report["target"]["backend"], "ort");
    EXPECT_EQ(report["policy"]["atol"], 1e-5);  // the defaults, not widened for this test
    ASSERT_EQ(report["results"].size(), 2u);
    for (const json& result : report["results"]) {
      EXPECT_EQ(result["output"], "output");
      EXPECT_EQ(result["stats"]["target"], "float32[2, 1000]");
      // The outputs carry a signal (calibrated BatchNorm), not ~1e-9 noise.
      EXPECT_GT(result["stats"]["source_values"]["max"].get<double>(), 0.5) << model;
    }
  }
};

TEST_F(TorchCliTest, Resnet18TorchScriptMatchesItsOnnxExport) {
  ExpectTorchScriptMatchesOnnx("resnet18");
}

TEST_F(TorchCliTest, MobilenetV2TorchScriptMatchesItsOnnxExport) {
  ExpectTorchScriptMatchesOnnx("mobilenet_v2");
}

TEST_F(TorchCliTest, OutputsMatchedByPositionAreRecordedInTheReport) {
  ProcessResult r =
      Convgate({"compare", Fixture("resnet18.pt"), Fixture("resnet18.onnx"), "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = ReadReport();
  EXPECT_EQ(report["source"]["output_matching"], "position");
  EXPECT_EQ(report["source"]["output_renames"], json({"output_0 -> output"}));
  EXPECT_EQ(report["source"]["outputs"], json({"output"}));
  EXPECT_EQ(report["target"]["output_matching"], "name");
  EXPECT_NE(r.out.find("outputs matched by position to the target's (torch names none)"),
            std::string::npos)
      << r.out;
  // The inputs come from the side that declares them (the ONNX model), whichever side it is.
  EXPECT_EQ(report["inputs"]["tensors"][0]["shape"], json({1, 3, 224, 224}));
}

TEST_F(TorchCliTest, AnOnnxSourceAgainstATorchScriptTargetWorksTheSameWay) {
  ProcessResult r =
      Convgate({"compare", Fixture("resnet18.onnx"), Fixture("resnet18.pt"), "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = ReadReport();
  EXPECT_EQ(report["target"]["output_matching"], "position");
  EXPECT_EQ(report["source"]["output_matching"], "name");
}

// `convgate bench` with a libtorch side: the TorchScript model (which declares no inputs) timed on
// the ONNX export's samples.
TEST_F(TorchCliTest, BenchTimesTheOnnxExportAgainstTorchScript) {
  ProcessResult r = Convgate({"bench", Fixture("resnet18.onnx"), Fixture("resnet18.pt"), "--warmup",
                              "1", "--iterations", "5", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = ReadReport();
  const json& sides = report["benchmark"]["sides"];
  ASSERT_EQ(sides.size(), 2u);
  EXPECT_EQ(sides[1]["backend"], "torch");
  EXPECT_EQ(sides[1]["latency"]["count"], 5);
  EXPECT_GT(sides[1]["peak_rss_bytes"].get<int64_t>(), 40 << 20);
}

TEST_F(TorchCliTest, ADifferentModelFails) {
  // Same input and output shapes and names, different network: the gate must say so.
  ProcessResult r = Convgate({"compare", Fixture("mobilenet_v2.pt"), Fixture("resnet18.onnx")});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("output 'output'"), std::string::npos) << r.out;
}

TEST_F(TorchCliTest, RunOnTorchScriptWithAShapePasses) {
  ProcessResult r =
      Convgate({"run", Fixture("resnet18.pt"), "--shape", "input:1x3x224x224", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = ReadReport();
  EXPECT_EQ(report["verdict"], "pass");
  EXPECT_EQ(report["model"]["backend"], "torch");
  ASSERT_EQ(report["results"].size(), 1u);
  EXPECT_EQ(report["results"][0]["output"], "output_0");
  EXPECT_EQ(report["results"][0]["shape"], json({1, 1000}));
  EXPECT_EQ(report["results"][0]["declared_dtype"], "");  // nothing declared to hold it to
  ASSERT_EQ(report["model"]["notes"].size(), 1u);
  EXPECT_NE(report["model"]["notes"][0].get<std::string>().find("non-empty and finite only"),
            std::string::npos);
  ASSERT_FALSE(report["inputs"]["notes"].empty());
  EXPECT_NE(report["inputs"]["notes"][0].get<std::string>().find("generated float32"),
            std::string::npos);
}

TEST_F(TorchCliTest, RunOnTorchScriptWithoutAShapeIsAUsageErrorNamingTheInput) {
  ProcessResult r = Convgate({"run", Fixture("resnet18.pt")});
  ASSERT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("the model declares no input shapes (TorchScript records none)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--shape input:DIMS"), std::string::npos) << r.err;
}

TEST_F(TorchCliTest, ATruncatedTorchScriptFileCannotBeLoaded) {
  const fs::path truncated = dir_ / "truncated.pt";
  fs::copy_file(Fixture("resnet18.pt"), truncated);
  fs::resize_file(truncated, 4096);
  ProcessResult r = Convgate({"compare", truncated.string(), Fixture("resnet18.onnx")});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find(truncated.string() + ": not a TorchScript archive"), std::string::npos)
      << r.err;
}

TEST_F(TorchCliTest, InspectNamesATorchScriptArchiveAndItsRunCommandWorks) {
  // inspect used to say "protobuf parse failed; the file may be truncated" for a .pt.
  ProcessResult r = Convgate({"inspect", Fixture("resnet18.pt"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json described = json::parse(r.out);
  EXPECT_EQ(described["format"], "torchscript");
  EXPECT_EQ(described["module"]["forward"], "forward(input: Tensor) -> Tensor");
  EXPECT_GT(described["tensor_records"]["bytes"].get<int64_t>(), 40'000'000);  // resnet18's 11.7M
  const std::string run = described["commands"][0];
  EXPECT_EQ(run, "convgate run " + Fixture("resnet18.pt") + " --shape input:1x3x224x224");
  ProcessResult ran = Convgate({"run", Fixture("resnet18.pt"), "--shape", "input:1x3x224x224"});
  EXPECT_EQ(ran.exit_code, 0) << Describe(ran);
}

TEST_F(TorchCliTest, AnOutputCountMismatchIsAStructureFailure) {
  // Saved outputs with two unnamed arrays against a model returning one tensor.
  TensorMap inputs, outputs;
  inputs.InsertOrAssign(
      "input", std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({1, 3, 224, 224}))).value());
  outputs.InsertOrAssign(
      "arr_0", std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({1, 1000}))).value());
  outputs.InsertOrAssign(
      "arr_1", std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({1, 1000}))).value());
  ASSERT_TRUE(io::WriteNpz(dir_ / "in.npz", inputs).ok());
  ASSERT_TRUE(io::WriteNpz(dir_ / "two.npz", outputs).ok());
  ProcessResult r = Convgate({"compare", (dir_ / "two.npz").string(), Fixture("resnet18.pt"),
                              "--load-inputs", (dir_ / "in.npz").string()});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("outputs cannot be matched by position: the target (torch) names no "
                       "outputs and returned 1 (output_0), the source has 2 (arr_0, arr_1)"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace convgate
