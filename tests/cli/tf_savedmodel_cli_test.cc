// Path B for TensorFlow SavedModels on the real binary: `convert SAVEDMODEL --to openvino` through
// ovc, and `verify` of the IR against TensorFlow itself (the exec backend running
// examples/exec/tf_savedmodel_runner.py: convgate has no TensorFlow backend), on the fixture
// scripts/make_tf_fixtures.sh builds (a small CNN as a tf.Module SavedModel, and a perturbed twin
// the gate must fail). Labels slow and openvino: TensorFlow takes ~5 s to import on two cores.
// Skipped, saying why, when the venv has no tensorflow-cpu (scripts/setup.sh installs it).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_fixture.h"
#include "testing/torch_fixtures.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

using testing::VenvPython;

class TfSavedModelCliTest : public testing::CliTest {
 protected:
  static void SetUpTestSuite() {
    folder_ = testing::TfFixtureFolder(error_);
    if (folder_.empty() && error_.find("no tensorflow-cpu") != std::string::npos) {
      skip_ = error_;
      error_.clear();
    }
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(error_.empty()) << error_;
    testing::CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("CONVGATE_CACHE_DIR");
    testing::CliTest::TearDown();
  }
  static std::string Fixture(const std::string& name) {
    return (fs::path(folder_) / name).string();
  }
  // TensorFlow on the source side, through the exec protocol.
  static std::string TfRunner() {
    return VenvPython() + " '" +
           (fs::path(CONVGATE_SOURCE_DIR) / "examples/exec/tf_savedmodel_runner.py").string() +
           "' {model} --serve {inputs_dir} {outputs_dir}";
  }
  json ReadJson(const std::string& file) const {
    std::ifstream in(dir_ / "out" / file);
    EXPECT_TRUE(in.good()) << "no " << file;
    return in.good() ? json::parse(in) : json();
  }
  std::string Out() const { return (dir_ / "out").string(); }

  static std::string folder_, error_, skip_;
};

std::string TfSavedModelCliTest::folder_, TfSavedModelCliTest::error_, TfSavedModelCliTest::skip_;

// ovc converts the SavedModel; the IR computes what TensorFlow computed (the fixture's saved
// outputs on its saved inputs), and the record says ovc and TensorFlow made it.
TEST_F(TfSavedModelCliTest, OvcConvertsTheSavedModelToAnIrThatComputesWhatTensorFlowDid) {
  const std::string ir = (dir_ / "tiny_cnn.xml").string();
  ProcessResult r =
      Convgate({"convert", Fixture("tiny_cnn"), "--to", "openvino", "-o", ir, "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json record = json::parse(r.out);
  EXPECT_NE(record.dump().find("converted by ovc"), std::string::npos) << record.dump(2);
  EXPECT_NE(record.dump().find("tensorflow-cpu 2.21.0"), std::string::npos) << record.dump(2);
  EXPECT_TRUE(fs::exists(dir_ / "tiny_cnn.bin"));

  ProcessResult compared =
      Convgate({"compare", Fixture("tiny_cnn_outputs.npz"), ir, "--load-inputs",
                Fixture("tiny_cnn_inputs.npz"), "--out", Out()});
  ASSERT_EQ(compared.exit_code, 0) << Describe(compared);
  const json report = ReadJson("report.json");
  EXPECT_EQ(report["target"]["backend"], "openvino");
  ASSERT_EQ(report["results"].size(), 1u) << report.dump(2).substr(0, 2000);
  EXPECT_EQ(report["results"][0]["output"], "logits");
  EXPECT_EQ(report["results"][0]["verdict"], "pass");
}

// verify: ovc's IR on OpenVINO against the SavedModel on TensorFlow, both run on the fixture's
// inputs (the exec backend reads input declarations from .onnx files only, so a SavedModel source
// takes --load-inputs).
TEST_F(TfSavedModelCliTest, VerifyPassesAgainstTensorFlowAndNamesOvc) {
  ProcessResult r =
      Convgate({"verify", Fixture("tiny_cnn"), "--to", "openvino", "--source-exec", TfRunner(),
                "--load-inputs", Fixture("tiny_cnn_inputs.npz"), "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json result = ReadJson("verify_result.json");
  EXPECT_EQ(result["verify_passed"], true) << result.dump(2);
  EXPECT_NE(result["conversion_path"].get<std::string>().find("ovc"), std::string::npos)
      << result.dump(2);
  const json report = ReadJson("report.json");
  EXPECT_EQ(report["comparison"]["source"]["backend"], "exec");
  EXPECT_EQ(report["comparison"]["target"]["backend"], "openvino");
  EXPECT_EQ(report["comparison"]["results"].size(), 1u);
}

// The gate can fail: the perturbed SavedModel on TensorFlow against the faithful model's IR.
TEST_F(TfSavedModelCliTest, AnIrOfAnotherModelFailsAgainstTensorFlow) {
  const std::string ir = (dir_ / "tiny_cnn.xml").string();
  ASSERT_EQ(Convgate({"convert", Fixture("tiny_cnn"), "--to", "openvino", "-o", ir}).exit_code, 0);
  ProcessResult r =
      Convgate({"verify", Fixture("tiny_cnn_perturbed"), "--target", ir, "--source-exec",
                TfRunner(), "--load-inputs", Fixture("tiny_cnn_inputs.npz"), "--out", Out()});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(ReadJson("verify_result.json")["verify_passed"], false);
  EXPECT_NE(r.out.find("output 'logits'"), std::string::npos) << Describe(r);
}

// A SavedModel ovc cannot read is exit 3 with ovc's (TensorFlow's) own words.
TEST_F(TfSavedModelCliTest, ABrokenSavedModelIsExitThreeWithOvcsMessage) {
  const fs::path broken = dir_ / "broken";
  fs::create_directories(broken / "variables");
  std::ofstream(broken / "saved_model.pb") << "not a protobuf";
  ProcessResult r = Convgate(
      {"convert", broken.string(), "--to", "openvino", "-o", (dir_ / "broken.xml").string()});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("ovc exited with code"), std::string::npos) << Describe(r);
  EXPECT_FALSE(fs::exists(dir_ / "broken.xml"));
}

}  // namespace
}  // namespace convgate
