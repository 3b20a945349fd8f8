// The hf backend on the real binary: Hugging Face folders of the tiny offline zoo
// (scripts/make_hf_zoo.sh) run by scripts/hf_runner.py in the project's venv, generating tokens
// greedily; a model and itself compare exactly, and what the backend cannot run is exit 3 saying
// why. Label slow: every run starts Python and loads transformers (~5 s).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

class HfCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    std::string error;
    zoo_ = testing::HfZooFolder(error);
    ASSERT_FALSE(zoo_.empty()) << error;
  }
  std::string Zoo(const std::string& name) const { return (fs::path(zoo_) / name).string(); }
  std::string Out() const { return (dir_ / "out").string(); }
  json Report() const {
    std::ifstream in(dir_ / "out" / "report.json");
    EXPECT_TRUE(in.good()) << "no report.json";
    return in.good() ? json::parse(in) : json();
  }
  std::string zoo_;
};

// The same folder on both sides: the same tokens and bit-identical logits, through the whole
// pipeline (input generation, the runner, outputs.npz, the comparison), for a decoder-only and
// an encoder-decoder model.
TEST_F(HfCliTest, AModelAgainstItselfGeneratesTheSameTokens) {
  for (const std::string model : {"gpt2", "t5"}) {
    fs::remove_all(Out());
    ProcessResult r =
        Convgate({"compare", Zoo(model), Zoo(model), "--dim", "sequence=5", "--val-range",
                  "input_ids:[0,99]", "--new-tokens", "4", "--out", Out()});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    json report = Report();
    EXPECT_EQ(report["source"]["backend"], "hf") << model;
    const std::string settings = report["source"]["backend_settings"];
    EXPECT_NE(settings.find("on PyTorch"), std::string::npos) << settings;
    EXPECT_NE(settings.find("4 new tokens"), std::string::npos) << settings;
    ASSERT_EQ(report["results"].size(), 2u) << model;
    for (const json& result : report["results"]) {
      EXPECT_EQ(result["stats"]["errors"]["max_abs_error"], 0.0) << result.dump();
    }
    // The 5-token prompt, then the 4 generated tokens.
    EXPECT_EQ(report["results"][0]["stats"]["source"], "int64[1, 9]") << model;
  }
}

TEST_F(HfCliTest, ModelsThatDoNotGenerateAreExitThreeSayingWhatToDo) {
  ProcessResult r = Convgate({"run", Zoo("bert"), "--out", Out()});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("is not a text-generation model"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("--to optimum-onnx"), std::string::npos) << Describe(r);
}

TEST_F(HfCliTest, BrokenFoldersAreExitThreeNamingTheFolder) {
  const fs::path broken = dir_ / "broken";
  fs::create_directories(broken);
  std::ofstream(broken / "config.json") << "{not json";
  ProcessResult r = Convgate({"run", broken.string(), "--out", Out()});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find(broken.string() + "/config.json: cannot read"), std::string::npos)
      << Describe(r);

  // Weights the config does not describe: transformers' own message, naming the folder.
  const fs::path mixed = dir_ / "mixed";
  fs::create_directories(mixed);
  fs::copy_file(fs::path(zoo_) / "gpt2/config.json", mixed / "config.json");
  fs::copy_file(fs::path(zoo_) / "llama/model.safetensors", mixed / "model.safetensors");
  r = Convgate({"run", mixed.string(), "--out", Out()});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find(mixed.string()), std::string::npos) << Describe(r);
}

// A prompt with ids the vocabulary does not hold is refused before generation, naming them.
TEST_F(HfCliTest, IdsOutsideTheVocabularyAreRefused) {
  ProcessResult r = Convgate({"run", Zoo("gpt2"), "--dim", "sequence=3", "--val-range",
                              "input_ids:[100000,100001]", "--out", Out()});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("outside the vocabulary"), std::string::npos) << Describe(r);
}

// The verify-conversion gate's Path A on the zoo's generative models: optimum-intel's export
// (fp16 weights; t5 stateless) generates the same tokens as the PyTorch source, its first step's
// logits within the float16-weight defaults, and verify_result.json names the resolved task.
TEST_F(HfCliTest, PathAVerifiesEveryGenerativeModelOfTheZoo) {
  for (const std::string model : {"gpt2", "t5", "llama"}) {
    fs::remove_all(Out());
    ProcessResult r = Convgate({"verify", Zoo(model), "--to", "optimum-openvino", "--dim",
                                "sequence=5", "--val-range", "input_ids:[0,99]", "--out", Out()});
    EXPECT_EQ(r.exit_code, 0) << model << ": " << Describe(r);
    std::ifstream in(dir_ / "out" / "verify_result.json");
    const json result = json::parse(in, nullptr, false);
    ASSERT_TRUE(result.is_object()) << Describe(r);
    EXPECT_EQ(result["task"],
              model == "t5" ? "text2text-generation-with-past" : "text-generation-with-past")
        << model;
    EXPECT_NE(result["e2e_detail"].get<std::string>().find("on OpenVINO CPU (f32)"),
              std::string::npos)
        << result["e2e_detail"];
  }
}

// Path B on a model the hf backend does not generate with: optimum's ONNX export of the zoo's
// bert, then that ONNX model through openvino.convert_model, verified on ONNX Runtime against
// OpenVINO. The IR keeps no dim names, so the target's own run takes the comparison's inputs
// (made from --dim on the ONNX source) rather than making its own.
TEST_F(HfCliTest, PathBConvertsTheOnnxExportToOpenvino) {
  ProcessResult r = Convgate(
      {"convert", Zoo("bert"), "--to", "optimum-onnx", "-o", (dir_ / "bert-onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string onnx = (dir_ / "bert-onnx" / "model.onnx").string();
  r = Convgate({"verify", onnx, "--to", "openvino", "--dim", "batch_size=1", "--dim",
                "sequence_length=6", "--val-range", "input_ids:[0,99]", "--out", Out()});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

}  // namespace
}  // namespace convgate
