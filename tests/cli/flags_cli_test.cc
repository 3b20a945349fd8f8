// The first-hour command-line bugs of issue 9, each on the real binary where a user met it: the
// documented value forms, flags that were silently ignored, the one size grammar, fp16's block
// list, messages, and verify's usage errors found before converting.
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

const std::string kExamples = std::string(CONVGATE_BINARY_DIR) + "/examples/";
const std::string kModel = kExamples + "tinycnn.onnx";
const std::string kConverted = kExamples + "tinycnn_converted.onnx";

class FlagsCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    testing::CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }

  // A usage error: exit 2, "convgate: " + `message` on stderr, nothing on stdout.
  void ExpectUsageError(const std::vector<std::string>& args, const std::string& message) {
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find("convgate: "), std::string::npos) << Describe(r);
    EXPECT_NE(r.err.find(message), std::string::npos) << "want: " << message << "\n" << Describe(r);
  }

  // verify refused `r` as a usage error and wrote only verify_result.json into `out`: failed,
  // with the error, and no conversion named.
  void ExpectUsageErrorResult(const ProcessResult& r, const std::string& out) {
    EXPECT_EQ(r.out.find("conversion failed"), std::string::npos) << Describe(r);
    EXPECT_EQ(r.err.find("conversion failed"), std::string::npos) << Describe(r);
    std::ifstream in(fs::path(out) / "verify_result.json");
    ASSERT_TRUE(in.good()) << "no verify_result.json\n" << Describe(r);
    const json result = json::parse(in, nullptr, false);
    ASSERT_TRUE(result.is_object()) << Describe(r);
    EXPECT_EQ(result["verify_passed"], false);
    EXPECT_EQ(result["e2e_passed"], false);
    EXPECT_TRUE(result["conversion_path"].is_null()) << result.dump(2);
    ASSERT_TRUE(result["error"].is_string()) << result.dump(2);
    // The error is the one stderr shows.
    EXPECT_NE(r.err.find(result["error"].get<std::string>().substr(0, 30)), std::string::npos)
        << result.dump(2) << "\n"
        << Describe(r);
    EXPECT_EQ(result["e2e_detail"], "Nothing ran: the request was refused as a usage error.");
    EXPECT_FALSE(fs::exists(fs::path(out) / "report.json")) << "nothing ran: no report";
  }
};

// Bug 3: CLI11 read "[0,1]" as a list of two values.
TEST_F(FlagsCliTest, EveryDocumentedValueRangeFormWorks) {
  for (const std::vector<std::string>& form :
       std::vector<std::vector<std::string>>{{"--val-range", "[0,1]"},
                                             {"--val-range", "[0.5,2]"},
                                             {"--val-range=[0,1]"},
                                             {"--val-range", "[0,1)"},
                                             {"--val-range", "image:[0,1]"},
                                             {"--shape", "image:[2,3,16,16]"},
                                             {"--input-shapes", "image:[2,3,16,16]"},
                                             {"--shape", "image:2x3x16x16"}}) {
    std::vector<std::string> args = {"compare", kModel, kConverted};
    args.insert(args.end(), form.begin(), form.end());
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, 0) << form.front() << "\n" << Describe(r);
  }
}

TEST_F(FlagsCliTest, TheShapeReachesTheInputs) {
  ProcessResult r =
      Convgate({"compare", kModel, kConverted, "--input-shapes", "image:[2,3,16,16]", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = json::parse(r.out);
  EXPECT_EQ(report["inputs"]["tensors"][0]["shape"], json({2, 3, 16, 16})) << report["inputs"];
}

// Bug 11: flags that did nothing, without a word.
TEST_F(FlagsCliTest, GenerationFlagsWithLoadedInputsAreRefused) {
  ASSERT_EQ(Convgate({"run", kModel, "--save-inputs", Path("in.npz")}).exit_code, 0);
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--samples", "4"}, {"--seed", "3"}, {"--val-range", "[0,2]"}}) {
    std::vector<std::string> args = {"compare", kModel, kConverted, "--load-inputs",
                                     Path("in.npz")};
    args.insert(args.end(), extra.begin(), extra.end());
    ExpectUsageError(args, extra.front() + " has no effect with --load-inputs");
  }
}

TEST_F(FlagsCliTest, SavingToANameThatIsNeitherNpzNorAFolderIsRefused) {
  ExpectUsageError({"run", kModel, "--save-inputs", Path("inputs.json")},
                   "is neither an .npz or .safetensors file nor a folder");
  EXPECT_FALSE(fs::exists(Path("inputs.json")));
  ExpectUsageError({"run", kModel, "--save-outputs", Path("outputs.npy")},
                   "an .npy holds one tensor, not a dataset");
}

TEST_F(FlagsCliTest, APerNameFlagGivenTwiceIsRefused) {
  ExpectUsageError(
      {"compare", kModel, kConverted, "--atol", "logits:1e-3", "--atol", "logits:1e-4"},
      "--atol is given twice for 'logits'");
  ExpectUsageError({"compare", kModel, kConverted, "--val-range", "[0,1]", "--val-range", "[0,2]"},
                   "--val-range is given twice globally");
}

// Bug 12: one size grammar and one duration grammar everywhere.
TEST_F(FlagsCliTest, CachePruneTakesTheSameSizesAsMemoryBudget) {
  ProcessResult r = Convgate(
      {"cache", "prune", "--max-bytes", "2GiB", "--min-age", "1.5h", "--dry-run", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json pruned = json::parse(r.out);
  EXPECT_EQ(pruned["max_bytes"], int64_t{2} << 30);
  EXPECT_EQ(pruned["min_age_seconds"], 5400);
  ExpectUsageError({"cache", "prune", "--max-bytes", "2 lots"}, "--max-bytes: size '2 lots'");
  ExpectUsageError({"compare", kModel, kConverted, "--per-node", "--memory-budget", "-5"},
                   "--memory-budget: size '-5'");
  ExpectUsageError({"convert", kModel, "--to", "fp16", "-o", Path("x.onnx"), "--timeout", "soon"},
                   "--timeout: duration 'soon'");
}

// Bug 13: the fp16 block list adds to the default; --help lists every parameter.
TEST_F(FlagsCliTest, ConvertHelpListsEveryParameterWithItsDefault) {
  ProcessResult r = Convgate({"convert", "--help"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* text :
       {"keep_io_types (default 1)", "op_block_list (default ", "NonMaxSuppression",
        "node_block_list", "clamp (default 0)", "opset (default 17)",
        "input_shape (default 1x3x224x224)", "dynamic_axes", "version (default"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("see README"), std::string::npos);
  EXPECT_EQ(r.out.find("the gate passed"), std::string::npos) << "convert gates nothing";
}

TEST_F(FlagsCliTest, AnOpBlockListKeepsTheDefaultList) {
  ProcessResult r = Convgate({"convert", kModel, "--to", "fp16", "--param", "op_block_list=Relu",
                              "-o", Path("fp16.onnx"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ProcessResult compared =
      Convgate({"compare", kModel, Path("fp16.onnx"), "--atol", "1e-2", "--rtol", "1e-2"});
  EXPECT_EQ(compared.exit_code, 0) << Describe(compared);
  ExpectUsageError({"convert", kModel, "--to", "fp16", "--param", "keep_io=1", "-o", Path("y")},
                   "unknown parameter 'keep_io' for --to fp16 (known: clamp, keep_io_types");
}

// Bug 14: messages.
TEST_F(FlagsCliTest, MessagesSayWhatIsWrongInConvgatesWords) {
  ExpectUsageError({"compare", kModel, kConverted, "--seed", "-1"},
                   "--seed: '-1' is not an integer in [0, 18446744073709551615]");
  ProcessResult margin = Convgate({"compare", kModel, kConverted, "--flip-margin", "-1"});
  EXPECT_EQ(margin.exit_code, 2);
  EXPECT_LT(margin.err.size(), 200u) << "no 300-digit numbers: " << margin.err;
  ExpectUsageError({"compare", kModel, kConverted, "--bogus"},
                   "convgate: unknown flag --bogus; `convgate compare --help` lists the flags");
  // A typo names the flag it resembles (issue 30), with or without its value attached.
  ExpectUsageError({"run", kModel, "--dims", "batch=1"},
                   "convgate: unknown flag --dims; did you mean --dim?");
  ExpectUsageError({"compare", kModel, kConverted, "--atoll=1e-3"},
                   "convgate: unknown flag --atoll; did you mean --atol?");
  ProcessResult r = Convgate({"compare", kModel, kConverted, "--out", Path("results") + "/"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("results in " + Path("results") + "/\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("results//"), std::string::npos) << r.out;
  for (const char* command : {"inspect", "cache", "convert"}) {
    ProcessResult help = Convgate({command, "--help"});
    EXPECT_EQ(help.out.find("the gate passed"), std::string::npos) << command << "\n" << help.out;
  }
}

TEST_F(FlagsCliTest, CompactJsonUnlessPretty) {
  ProcessResult compact = Convgate({"compare", kModel, kConverted, "--json"});
  ProcessResult pretty = Convgate({"compare", kModel, kConverted, "--json", "--pretty"});
  ASSERT_EQ(compact.exit_code, 0) << Describe(compact);
  EXPECT_EQ(std::count(compact.out.begin(), compact.out.end(), '\n'), 1) << "one line";
  EXPECT_GT(std::count(pretty.out.begin(), pretty.out.end(), '\n'), 50);
  EXPECT_EQ(json::parse(compact.out)["checks"], json::parse(pretty.out)["checks"]);
}

// Bug 7: verify found usage errors only after converting, and reported them as a verdict. A usage
// error still writes verify_result.json (the verify-conversion reference: a file for every
// outcome), saying nothing ran, and never "conversion failed"; report.json and junit.xml are not
// written.
TEST_F(FlagsCliTest, VerifyRefusesBadFlagsBeforeConverting) {
  const std::string out = Path("out");
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--shape", "nope:1x3x16x16"},
                                             {"--val-range", "nope:[0,1]"},
                                             {"--dim", "nosuch=3"},
                                             {"--atol", "nosuch:1e-3"},
                                             {"--shape", "image:1x3x8x8"}}) {
    std::vector<std::string> args = {"verify", kModel, "--to", "opset:17", "--out", out};
    args.insert(args.end(), bad.begin(), bad.end());
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, 2) << bad.front() << " " << bad.back() << "\n" << Describe(r);
    EXPECT_FALSE(fs::exists(dir_ / "cache" / "conversions")) << "nothing may be converted";
    ExpectUsageErrorResult(r, out);
  }
}

// Refused by the command line itself (an unknown flag, a --param for a conversion verify is to
// choose, an unknown kind), before verify ran at all: verify_result.json says so all the same.
TEST_F(FlagsCliTest, VerifyUsageErrorsOfTheCommandLineWriteVerifyResult) {
  const std::string out = Path("out");
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--to", "opset:17", "--no-such-flag"},
                                             {"--to", "auto", "--param", "opset=17"},
                                             {"--to", "no-such-kind"},
                                             {"--to", "fp16", "--param", "no_such_param=1"}}) {
    fs::remove_all(out);
    std::vector<std::string> args = {"verify", kModel, "--out=" + out};
    args.insert(args.end(), bad.begin(), bad.end());
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    ExpectUsageErrorResult(r, out);
  }
}

// --context names the orchestrator's pipeline_state.json: its model_id is the source, and
// verify_result.json goes to verify-conversion/ beside it, for a pass, for a model that is not
// there (exit 3), and for a usage error found by the command line (exit 2).
TEST_F(FlagsCliTest, VerifyWithAContextFileWritesItsResultBesideIt) {
  const fs::path results = dir_ / "agent-results";
  fs::create_directories(results);
  const fs::path state = results / "pipeline_state.json";
  const fs::path verify_result = results / "verify-conversion" / "verify_result.json";
  auto read_result = [&] {
    std::ifstream in(verify_result);
    return json::parse(in, nullptr, false);
  };
  std::ofstream(state) << json{{"model_id", kModel}, {"optimum_supported", false}}.dump();
  ProcessResult r = Convgate({"verify", "--context", state.string(), "--to", "fp16"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(read_result()["verify_passed"], true) << Describe(r);

  fs::remove_all(results / "verify-conversion");
  std::ofstream(state) << json{{"model_id", "models/missing.onnx"}}.dump();
  r = Convgate({"verify", "--context", state.string(), "--to", "fp16"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("missing.onnx"), std::string::npos) << Describe(r);
  EXPECT_EQ(read_result()["verify_passed"], false) << Describe(r);

  fs::remove_all(results / "verify-conversion");
  r = Convgate({"verify", "--context", state.string(), "--to", "no-such-kind"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_FALSE(read_result()["error"].is_null()) << Describe(r);

  std::ofstream(state) << "{\"model_id\": 3}";
  r = Convgate({"verify", "--context", state.string(), "--to", "fp16"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("model_id must be a non-empty string"), std::string::npos) << Describe(r);
}

}  // namespace
}  // namespace convgate
