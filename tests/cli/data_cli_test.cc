// Inputs that exercise the model, end to end with the real binary, on the fixtures of
// tools/make_data_fixtures.cc: a detector whose map is 0 on noise, where a perturbed weight passes
// under generated inputs and fails under --data images; a target made NHWC, renamed, or named as
// TensorFlow names tensors; a corrupt JPEG; --min-coverage; per-side runtime settings; inputs
// saved by position. And --data on a torchvision classifier.
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
using testing::RunProcess;

const fs::path kData = fs::path(CONVGATE_BINARY_DIR) / "examples" / "data";

std::string Data(const std::string& name) { return (kData / name).string(); }
const std::string kImages = "image:" + Data("images");

class DataCliTest : public testing::CliTest {
 protected:
  json Report(const std::string& out) {
    std::ifstream in(fs::path(out) / "report.json");
    EXPECT_TRUE(in.good()) << "no report.json in " << out;
    return in.good() ? json::parse(in) : json();
  }
};

// The first finding: noise never reaches the broken path, images do.
TEST_F(DataCliTest, APerturbedWeightPassesOnNoiseAndFailsOnImages) {
  const ProcessResult noise =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot_fault_weight.onnx")});
  ASSERT_EQ(noise.exit_code, 0) << "the fixture no longer hides the fault from noise, so this "
                                   "test proves nothing: "
                                << Describe(noise);
  EXPECT_NE(noise.out.find("give real data with --data"), std::string::npos) << noise.out;
  const std::string out = Path("images");
  const ProcessResult images =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot_fault_weight.onnx"), "--data",
                kImages, "--out", out});
  EXPECT_EQ(images.exit_code, 1) << Describe(images);
  const json report = Report(out);
  EXPECT_EQ(report["inputs"]["samples"], 4);
  ASSERT_EQ(report["inputs"]["files"].size(), 4u) << report["inputs"].dump();
  EXPECT_EQ(fs::path(report["inputs"]["files"][0]["path"].get<std::string>()).filename(),
            "a_squares.png");
  EXPECT_EQ(report["inputs"]["files"][0]["sha256"].get<std::string>().size(), 64u);
  // The faithful model passes on the same images.
  const ProcessResult same =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot.onnx"), "--data", kImages});
  EXPECT_EQ(same.exit_code, 0) << Describe(same);
}

TEST_F(DataCliTest, MinCoverageFailsTheGateOnAConstantOutput) {
  const ProcessResult gated =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot.onnx"), "--min-coverage"});
  EXPECT_EQ(gated.exit_code, 1) << Describe(gated);
  EXPECT_NE(gated.out.find("--min-coverage: output 'heat' is 0"), std::string::npos) << gated.out;
  const ProcessResult covered =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot.onnx"), "--min-coverage",
                "--data", kImages});
  EXPECT_EQ(covered.exit_code, 0) << Describe(covered);
}

TEST_F(DataCliTest, AnNhwcTargetNeedsTargetLayout) {
  const ProcessResult plain = Convgate(
      {"compare", Data("brightspot.onnx"), Data("brightspot_nhwc.onnx"), "--data", kImages});
  EXPECT_EQ(plain.exit_code, 3) << Describe(plain);
  EXPECT_NE(plain.err.find("--target-layout nhwc"), std::string::npos) << plain.err;
  const std::string out = Path("nhwc");
  const ProcessResult mapped =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot_nhwc.onnx"), "--data", kImages,
                "--target-layout", "nhwc", "--out", out});
  ASSERT_EQ(mapped.exit_code, 0) << Describe(mapped);
  const json report = Report(out);
  EXPECT_EQ(report["target"]["output_matching"], "map");
  EXPECT_NE(report["target"]["notes"].dump().find("transposed NCHW -> NHWC"), std::string::npos)
      << report["target"].dump();
  // With the layout given, the fault of a converted NHWC target still shows.
  const ProcessResult faulty =
      Convgate({"compare", Data("brightspot_fault_weight.onnx"), Data("brightspot_nhwc.onnx"),
                "--data", kImages, "--target-layout", "nhwc"});
  EXPECT_EQ(faulty.exit_code, 1) << Describe(faulty);
}

TEST_F(DataCliTest, RenamedInterfacesBindByMapSuffixAndPosition) {
  const ProcessResult by_position = Convgate(
      {"compare", Data("brightspot.onnx"), Data("brightspot_renamed.onnx"), "--data", kImages});
  EXPECT_EQ(by_position.exit_code, 0) << Describe(by_position);
  EXPECT_NE(by_position.out.find("input 'x' -> the target's 'input.1' by position"),
            std::string::npos)
      << by_position.out;
  const ProcessResult mapped =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot_renamed.onnx"), "--map",
                "x=input.1", "--map", "heat=heat:0"});
  EXPECT_EQ(mapped.exit_code, 0) << Describe(mapped);
  EXPECT_NE(mapped.out.find("by --map"), std::string::npos) << mapped.out;
  const ProcessResult tf =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot_tf.onnx"), "--data", kImages});
  EXPECT_EQ(tf.exit_code, 0) << Describe(tf);
  EXPECT_NE(tf.out.find("'x:0' by the ':0' rule"), std::string::npos) << tf.out;
  const ProcessResult typo = Convgate(
      {"compare", Data("brightspot.onnx"), Data("brightspot_renamed.onnx"), "--map", "x=input.2"});
  EXPECT_EQ(typo.exit_code, 2) << Describe(typo);
  EXPECT_NE(typo.err.find("no input 'input.2'"), std::string::npos) << typo.err;
}

TEST_F(DataCliTest, ACorruptImageIsExit3NamingIt) {
  const ProcessResult broken =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot.onnx"), "--data",
                "image:" + Data("images/broken/truncated.jpg")});
  EXPECT_EQ(broken.exit_code, 3) << Describe(broken);
  EXPECT_NE(broken.err.find("truncated.jpg cannot be decoded"), std::string::npos) << broken.err;
  const ProcessResult empty =
      Convgate({"run", Data("brightspot.onnx"), "--data", "image:" + Path("nowhere/")});
  EXPECT_EQ(empty.exit_code, 3) << Describe(empty);
  const ProcessResult usage = Convgate({"run", Data("brightspot.onnx"), "--resize", "64x64"});
  EXPECT_EQ(usage.exit_code, 2) << Describe(usage);
  const ProcessResult both =
      Convgate({"run", Data("brightspot.onnx"), "--data", kImages, "--load-inputs", Path("x.npz")});
  EXPECT_EQ(both.exit_code, 2) << Describe(both);
}

TEST_F(DataCliTest, EachSideRunsWithItsOwnSettings) {
  const std::string out = Path("sides");
  const ProcessResult result = Convgate(
      {"compare", Data("brightspot.onnx"), Data("brightspot.onnx"), "--source-ort-optimization",
       "disabled", "--target-threads", "1", "--target-inter-op-threads", "2", "--out", out});
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  const json report = Report(out);
  const std::string source = report["source"]["backend_settings"];
  const std::string target = report["target"]["backend_settings"];
  EXPECT_NE(source.find("CPUExecutionProvider, graph optimization disabled"), std::string::npos)
      << source;
  EXPECT_NE(target.find("graph optimization extended, intra-op threads 1, inter-op 2 threads"),
            std::string::npos)
      << target;
}

// np.savez(f, x) names its array arr_0: bound to the model's input by position.
TEST_F(DataCliTest, PositionalNpzInputsBindByPosition) {
  const std::string named = Path("named.npz");
  ASSERT_EQ(Convgate({"run", Data("brightspot.onnx"), "--save-inputs", named}).exit_code, 0);
  const ProcessResult renamed = RunProcess(
      {"/usr/bin/python3", "-c",
       "import numpy as np, sys; x = np.load(sys.argv[1])['x']; np.savez(sys.argv[2], x)", named,
       Path("positional.npz")});
  ASSERT_EQ(renamed.exit_code, 0) << Describe(renamed);
  const ProcessResult result =
      Convgate({"compare", Data("brightspot.onnx"), Data("brightspot.onnx"), "--load-inputs",
                Path("positional.npz")});
  EXPECT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(result.out.find("arr_0 -> x"), std::string::npos) << result.out;
}

// Text tokenized by the tokenizer.json beside the model (the venv's tokenizers package), padded to
// the longest line, with the attention mask made to match; both files recorded.
TEST_F(DataCliTest, TextIsTokenizedByTheModelsTokenizer) {
  const std::string out = Path("text");
  const ProcessResult result =
      Convgate({"compare", Data("text/textcls.onnx"), Data("text/textcls.onnx"), "--data",
                "text:input_ids=" + Data("text/sentences.txt"), "--out", out});
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(result.out.find("3 text line(s)"), std::string::npos) << result.out;
  // Padded with the tokenizer's own [PAD] (id 1), not 0 ([UNK] here).
  EXPECT_NE(result.out.find("padded to 6 with id 1"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("the attention mask of 'input_ids'"), std::string::npos) << result.out;
  const json report = Report(out);
  EXPECT_EQ(report["inputs"]["samples"], 3);
  ASSERT_EQ(report["inputs"]["files"].size(), 2u);  // the tokenizer, then the text
  EXPECT_EQ(fs::path(report["inputs"]["files"][0]["path"].get<std::string>()).filename(),
            "tokenizer.json");
  const ProcessResult missing =
      Convgate({"run", Data("brightspot.onnx"), "--data", "text:" + Data("text/sentences.txt")});
  EXPECT_EQ(missing.exit_code, 2) << Describe(missing);
  const ProcessResult broken =
      Convgate({"run", Data("text/textcls.onnx"), "--data",
                "text:input_ids=" + Data("text/sentences.txt"), "--tokenizer", Data("table.csv")});
  EXPECT_EQ(broken.exit_code, 3) << Describe(broken);
  EXPECT_NE(broken.err.find("table.csv is not a tokenizer.json"), std::string::npos) << broken.err;
}

// A torchvision classifier on the same images: the ImageNet preprocessing a user gives it.
class DataTorchCliTest : public testing::TorchCliTest {};

// TorchScript against its ONNX export on images: the data set is made for the ONNX side (the
// TorchScript one declares no input shapes) and both take it.
TEST_F(DataTorchCliTest, ResnetOnImagesWithImagenetNormalization) {
  const std::string out = Path("resnet");
  const ProcessResult result = Convgate(
      {"compare", Fixture("resnet18.pt"), Fixture("resnet18.onnx"), "--data", kImages,
       "--resize-mode", "crop", "--normalize", "imagenet", "--classifier", "output", "--out", out});
  EXPECT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(result.out.find("224x224 centre-cropped, RGB, NCHW"), std::string::npos) << result.out;
  std::ifstream in(fs::path(out) / "report.json");
  ASSERT_TRUE(in.good());
  const json report = json::parse(in);
  EXPECT_EQ(report["inputs"]["samples"], 4);
  ASSERT_EQ(report["agreements"].size(), 1u);
  EXPECT_EQ(report["agreements"][0]["rows"], 4);
}

}  // namespace
}  // namespace convgate
