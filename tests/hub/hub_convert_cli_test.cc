// Conversion when a repository publishes no ONNX file: tiny random-weight models of the offline zoo
// (scripts/make_hf_zoo.sh) served by tests/fixtures/fake_hub.py without model.onnx; `convgate run
// hf://org/<model>/model.onnx` fetches config.json, the weights and the tokenizer files at one
// commit, exports them with optimum (the optimum-onnx conversion, the venv's real exporter), and
// says where the model came from; a second run converts nothing. Labels hub and slow: every export
// imports torch and optimum (20-70 s on 2 busy cores).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/cli_fixture.h"
#include "testing/fake_hub.h"

namespace convgate::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class HubConvertCliTest : public HubCliTest {
 protected:
  void SetUp() override {
    HubCliTest::SetUp();
    std::string error;
    zoo_ = HfZooFolder(error);
    ASSERT_FALSE(zoo_.empty()) << error;
  }

  // The zoo's `model` folder as the repository org/<name>, without any .onnx file.
  void Publish(const std::string& model, const std::string& name) {
    const fs::path repo = dir_ / "repos/org" / name;
    fs::create_directories(repo);
    for (const auto& entry : fs::directory_iterator(fs::path(zoo_) / model)) {
      if (entry.path().extension() != ".onnx")
        fs::copy(entry.path(), repo / entry.path().filename());
    }
  }

  // The conversion cache in the test's folder too.
  ProcessResult Run(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
    env.push_back("CONVGATE_CACHE_DIR=" + Path("convgate-cache"));
    return RunWithHub(args, "hf-cache", env);
  }

  std::string Commit(const std::string& name) const {
    return ReadWholeFile(dir_ / "hf-cache" / ("models--org--" + name) / "refs/main");
  }

  std::string zoo_;
};

TEST_F(HubConvertCliTest, BertWithoutOnnxIsConvertedOnceAndSaysFromWhat) {
  Publish("bert", "bert");
  StartHub();
  const std::vector<std::string> inputs = {"--val-range", "input_ids:[0,99]"};
  std::vector<std::string> args = {"run", "hf://org/bert/model.onnx", "--out", Path("first")};
  args.insert(args.end(), inputs.begin(), inputs.end());
  ProcessResult first = Run(args);
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  const std::string commit = Commit("bert");
  ASSERT_EQ(commit.size(), 40u);
  EXPECT_NE(first.out.find("hf://org/bert/model.onnx: converted from config.json, "
                           "model.safetensors"),
            std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("of org/bert at commit " + commit + " by optimum-onnx"),
            std::string::npos)
      << first.out;
  const json origin = ReadJson("first/report.json")["model_origins"][0];
  EXPECT_EQ(origin["how"], "converted");
  EXPECT_EQ(origin["commit"], commit);
  EXPECT_EQ(origin["revision"], "main");
  const std::vector<std::string> from = origin["converted_from"];
  EXPECT_EQ(from.front(), "config.json");
  EXPECT_NE(std::find(from.begin(), from.end(), "tokenizer.json"), from.end()) << origin.dump();
  EXPECT_FALSE(origin.value("conversion_cache_hit", false));
  EXPECT_EQ(ReadJson("first/verify_result.json")["model_origins"][0]["how"], "converted");

  // Again: the conversion cache answers (keyed by the files of that commit), nothing exports.
  args[3] = Path("second");
  ProcessResult second = Run(args);
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  EXPECT_TRUE(
      ReadJson("second/report.json")["model_origins"][0].value("conversion_cache_hit", false));
  EXPECT_NE(second.out.find("(conversion cache hit)"), std::string::npos) << second.out;

  // Offline, from both caches: no request at all.
  const size_t requests = RequestCount();
  args[3] = Path("offline");
  ProcessResult offline = Run(args, {"HF_HUB_OFFLINE=1"});
  ASSERT_EQ(offline.exit_code, 0) << Describe(offline);
  EXPECT_EQ(RequestCount(), requests);
}

TEST_F(HubConvertCliTest, AnArchitectureOptimumCannotExportIsExit3NamingIt) {
  Publish("bert", "odd");
  // transformers knows no such model type, so optimum has no export config for it.
  std::ofstream(dir_ / "repos/org/odd/config.json")
      << R"({"model_type": "convgate-unknown-arch", "architectures": ["OddModel"]})";
  StartHub();
  ProcessResult r = Run({"run", "hf://org/odd/model.onnx"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("model type 'convgate-unknown-arch'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("with optimum failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("convgate-unknown-arch", r.err.find("failed")), std::string::npos)
      << "the exporter's own message names the type too:\n"
      << r.err;

  // Nothing to convert from: the file is missing, and the message says what else is.
  fs::create_directories(dir_ / "repos/org/bare");
  std::ofstream(dir_ / "repos/org/bare/README.md") << "no model here\n";
  hub_.reset();
  StartHub();
  ProcessResult bare = Run({"run", "hf://org/bare/model.onnx"});
  EXPECT_EQ(bare.exit_code, 3) << Describe(bare);
  EXPECT_NE(bare.err.find("hf://org/bare/model.onnx: 'model.onnx' of org/bare at main: not found"),
            std::string::npos)
      << bare.err;
  EXPECT_NE(bare.err.find("and the repository has no config.json to convert from"),
            std::string::npos)
      << bare.err;
}

// Issue 25, item 1: a Hub id as verify's SOURCE goes Path A, as OpenVINO's verify-conversion
// document has it: hf://org/name, or the bare org/name, is fetched as a model folder at one commit
// and exported by optimum-cli; the result file says where it came from. An id the hub does not
// have says how the bare text was read.
TEST_F(HubConvertCliTest, AHubIdIsVerifiedThroughPathA) {
  Publish("bert-cls", "bert-cls");
  StartHub();
  ProcessResult uri = Run({"verify", "hf://org/bert-cls", "--out", Path("uri")});
  ASSERT_EQ(uri.exit_code, 0) << Describe(uri);
  const json result = ReadJson("uri/verify_result.json");
  EXPECT_EQ(result["conversion_path"], "optimum-cli") << result.dump(1);
  EXPECT_EQ(result["model_origins"][0]["repo_id"], "org/bert-cls") << result.dump(1);
  EXPECT_EQ(result["model_origins"][0]["commit"], Commit("bert-cls")) << result.dump(1);
  const json report = ReadJson("uri/report.json");
  ASSERT_FALSE(report["path_attempts"].empty()) << report.dump(1);
  EXPECT_EQ(report["path_attempts"][0].get<std::string>().rfind("optimum-openvino", 0), 0u)
      << report["path_attempts"].dump(1);

  ProcessResult bare = Run({"verify", "org/bert-cls", "--out", Path("bare")});
  ASSERT_EQ(bare.exit_code, 0) << Describe(bare);
  EXPECT_EQ(ReadJson("bare/verify_result.json")["model_origins"][0]["how"], "cache");

  ProcessResult missing = Run({"verify", "org/nothing-here", "--out", Path("missing")});
  EXPECT_EQ(missing.exit_code, 3) << Describe(missing);
  const json failed = ReadJson("missing/verify_result.json");
  EXPECT_EQ(failed["verify_passed"], false) << failed.dump(1);
  EXPECT_EQ(failed["e2e_detail"],
            "Could not get the source org/nothing-here; nothing was "
            "converted or run.")
      << failed.dump(1);
  EXPECT_NE(missing.err.find("SOURCE org/nothing-here is no local path; read as the Hub id "
                             "hf://org/nothing-here"),
            std::string::npos)
      << missing.err;
}

// Issue 29, item 4: the reference's model-specific conversion parameters. A config.json without
// architectures or pipeline tag leaves the export at the gate's default task (text generation),
// which a BERT cannot do; --model-type bert (or a manifest's model_type) steers it to
// feature-extraction, and the origin says which task and why.
TEST_F(HubConvertCliTest, ADeclaredModelTypeSteersTheExportsTask) {
  Publish("bert", "untyped");
  const fs::path config = dir_ / "repos/org/untyped/config.json";
  json settings = json::parse(ReadWholeFile(config));
  settings.erase("architectures");
  std::ofstream(config) << settings.dump();
  StartHub();
  const std::vector<std::string> inputs = {"--val-range", "input_ids:[0,99]"};
  std::vector<std::string> args = {"run", "hf://org/untyped/model.onnx", "--out", Path("auto")};
  args.insert(args.end(), inputs.begin(), inputs.end());
  ProcessResult untyped = Run(args);
  EXPECT_EQ(untyped.exit_code, 3) << Describe(untyped);
  EXPECT_NE(untyped.err.find("(model type 'bert', task text-generation-with-past: config.json: "
                             "model_type bert, no pipeline_tag or known architecture (the gate's "
                             "default)) with optimum failed"),
            std::string::npos)
      << untyped.err;
  EXPECT_NE(untyped.err.find("\n  if that task is wrong for the model, --model-type TYPE"),
            std::string::npos)
      << untyped.err;

  args[3] = Path("typed");
  args.insert(args.end(), {"--model-type", "bert"});
  ProcessResult typed = Run(args);
  ASSERT_EQ(typed.exit_code, 0) << Describe(typed);
  const json origin = ReadJson("typed/report.json")["model_origins"][0];
  EXPECT_EQ(origin["how"], "converted") << origin.dump(1);
  EXPECT_EQ(origin.value("conversion_task", ""),
            "feature-extraction (declared model type bert, no architecture in config.json: the "
            "type's task)")
      << origin.dump(1);
  EXPECT_NE(typed.out.find(", task feature-extraction (declared model type bert"),
            std::string::npos)
      << typed.out;

  // A manifest's model_type steers the preflight's export and the job's own fetch alike (the
  // job's fetch then finds the export in the conversion cache).
  std::ofstream(dir_ / "m.yaml") << "models:\n"
                                    "  - id: typed\n"
                                    "    source: hf://org/untyped/model.onnx\n"
                                    "    model_type: bert\n"
                                    "    flags: [--val-range, 'input_ids:[0,99]']\n";
  ProcessResult batch = Run({"batch", Path("m.yaml"), "--out", Path("batch")});
  ASSERT_EQ(batch.exit_code, 0) << Describe(batch);
  const json job = ReadJson("batch/typed/report.json")["model_origins"][0];
  EXPECT_TRUE(job.value("conversion_cache_hit", false)) << job.dump(1);
  EXPECT_EQ(
      job.value("conversion_task", "").rfind("feature-extraction (declared model type bert", 0), 0u)
      << job.dump(1);
}

TEST_F(HubConvertCliTest, Gpt2AndVitConvertToo) {
  Publish("gpt2", "gpt2");
  Publish("vit", "vit");
  StartHub();
  // Inputs a decoder with an empty past takes: token ids in the vocabulary, a mask over the 5
  // tokens, positions 0-4.
  ProcessResult gpt2 =
      Run({"run", "hf://org/gpt2/model.onnx", "--out", Path("gpt2"), "--dim", "sequence_length=5",
           "--dim", "past_sequence_length=0", "--dim", "past_sequence_length + sequence_length=5",
           "--val-range", "input_ids:[0,99]", "--val-range", "attention_mask:[1,1]", "--val-range",
           "position_ids:[0,4]"});
  EXPECT_EQ(gpt2.exit_code, 0) << Describe(gpt2);
  EXPECT_EQ(ReadJson("gpt2/report.json")["model_origins"][0]["how"], "converted");
  // The zoo's vit takes 3 x 32 x 32 images (its config.json); the export leaves them symbolic.
  ProcessResult vit = Run({"run", "hf://org/vit/model.onnx", "--out", Path("vit"), "--dim",
                           "num_channels=3", "--dim", "height=32", "--dim", "width=32"});
  EXPECT_EQ(vit.exit_code, 0) << Describe(vit);
  EXPECT_EQ(ReadJson("vit/report.json")["model_origins"][0]["how"], "converted");
}

}  // namespace
}  // namespace convgate::testing
