// Saved inputs and outputs on the real binary (issue 9): --save-inputs and --save-outputs to one
// folder make an ONNX test case that reloads as a source, saving never destroys what is there,
// saved outputs that name nothing (a lone .npy, numpy's arr_0, arr_1) are matched by position, and
// a comparison of nothing fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/test_case.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const fs::path kModels = fs::path(CONVGATE_BINARY_DIR) / "examples";
// One input x, one output y (libonnx-testdata).
const fs::path kAbsCase = "/usr/share/libonnx-testdata/data/node/test_abs";

class SavedDataCliTest : public testing::CliTest {
 protected:
  static std::string Model(const std::string& name) { return (kModels / name).string(); }

  static Tensor Floats(std::vector<float> values) {
    return Tensor::FromVector<float>(DType::kFloat32,
                                     Shape::Of({static_cast<int64_t>(values.size())}), values);
  }
  // An .npz of float32 vectors, in the order given.
  std::string Npz(const std::string& name,
                  const std::vector<std::pair<std::string, std::vector<float>>>& members) {
    TensorMap map;
    for (const auto& [key, values] : members) map.InsertOrAssign(key, Floats(values));
    EXPECT_TRUE(io::WriteNpz(dir_ / name, map).ok());
    return Path(name);
  }
  std::string Npy(const std::string& name, Tensor tensor) {
    EXPECT_TRUE(io::WriteNpy(dir_ / name, tensor).ok());
    return Path(name);
  }
  static std::vector<std::string> Files(const fs::path& dir) {
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), dir).string());
    }
    std::sort(files.begin(), files.end());
    return files;
  }
};

// The data loss of issue 9: outputs went to input_K.pb, over the inputs, and the folder no longer
// loaded.
TEST_F(SavedDataCliTest, InputsAndOutputsSavedToOneFolderReloadAsATestCase) {
  const std::string folder = Path("case");
  ProcessResult saved =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"), "--samples", "2",
                "--save-inputs", folder, "--save-outputs", folder});
  ASSERT_EQ(saved.exit_code, 0) << Describe(saved);
  EXPECT_NE(saved.out.find("inputs saved to " + folder), std::string::npos) << saved.out;
  EXPECT_NE(saved.out.find("source outputs saved to " + folder), std::string::npos) << saved.out;
  const std::vector<std::string> data_set = {"input_0.pb", "output_0.pb", "output_1.pb"};
  std::vector<std::string> expected;
  for (const char* set : {"test_data_set_0/", "test_data_set_1/"}) {
    for (const std::string& file : data_set) expected.push_back(set + file);
  }
  EXPECT_EQ(Files(folder), expected);

  ProcessResult good = Convgate({"compare", folder, Model("tinycnn_converted.onnx"), "--json"});
  ASSERT_EQ(good.exit_code, 0) << Describe(good);
  const json report = json::parse(good.out);
  EXPECT_EQ(report["summary"]["checks"], 4);
  EXPECT_EQ(report["source"]["outputs"], json({"logits", "probs"}));
  ProcessResult bad =
      Convgate({"compare", "--load-outputs", folder, Model("tinycnn_perturbed.onnx")});
  EXPECT_EQ(bad.exit_code, 1) << Describe(bad);
  // The same command again rewrites both halves.
  EXPECT_EQ(Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"),
                      "--samples", "2", "--save-inputs", folder, "--save-outputs", folder})
                .exit_code,
            0);
  EXPECT_EQ(Files(folder), expected);
}

TEST_F(SavedDataCliTest, OutputsCompleteATestCaseOnlyFromItsOwnInputs) {
  const std::string folder = Path("case");
  ASSERT_EQ(Convgate({"run", Model("tinycnn.onnx"), "--save-inputs", folder}).exit_code, 0);
  const std::string input_bytes = *ReadFile(fs::path(folder) / "test_data_set_0/input_0.pb");
  // Outputs of other (generated) inputs would be paired with the folder's: refused, nothing runs.
  ProcessResult other = Convgate({"run", Model("tinycnn.onnx"), "--save-outputs", folder});
  EXPECT_EQ(other.exit_code, 2) << Describe(other);
  EXPECT_NE(other.err.find("already holds inputs (input_K.pb) that this run did not use"),
            std::string::npos)
      << other.err;
  EXPECT_FALSE(io::TestCaseHolds(folder, io::TestCasePart::kOutputs));
  // The outputs of the folder's own inputs go beside them.
  ProcessResult own =
      Convgate({"run", Model("tinycnn.onnx"), "--load-inputs", folder, "--save-outputs", folder});
  ASSERT_EQ(own.exit_code, 0) << Describe(own);
  EXPECT_EQ(*ReadFile(fs::path(folder) / "test_data_set_0/input_0.pb"), input_bytes);
  ProcessResult reloaded = Convgate({"compare", folder, Model("tinycnn_converted.onnx")});
  EXPECT_EQ(reloaded.exit_code, 0) << Describe(reloaded);
  // New inputs beside those outputs would pair them wrongly.
  ProcessResult inputs = Convgate({"run", Model("tinycnn.onnx"), "--save-inputs", folder});
  EXPECT_EQ(inputs.exit_code, 2) << Describe(inputs);
  EXPECT_EQ(*ReadFile(fs::path(folder) / "test_data_set_0/input_0.pb"), input_bytes);
}

TEST_F(SavedDataCliTest, SavePathsThatWouldDestroyDataAreUsageErrors) {
  // One .npz cannot hold both: refused before the model loads (it does not even exist here).
  ProcessResult both = Convgate({"run", Path("absent.onnx"), "--save-inputs", Path("data.npz"),
                                 "--save-outputs", Path("data.npz")});
  EXPECT_EQ(both.exit_code, 2) << Describe(both);
  EXPECT_NE(both.err.find("an .npz holds one set of tensors"), std::string::npos) << both.err;
  // The file the inputs come from is not overwritten by the outputs.
  const std::string inputs = Path("in.npz");
  ASSERT_EQ(Convgate({"run", Model("tinycnn.onnx"), "--save-inputs", inputs}).exit_code, 0);
  const std::string before = *ReadFile(inputs);
  ProcessResult over =
      Convgate({"run", Model("tinycnn.onnx"), "--load-inputs", inputs, "--save-outputs", inputs});
  EXPECT_EQ(over.exit_code, 2) << Describe(over);
  EXPECT_EQ(*ReadFile(inputs), before);
  // An .npy cannot hold a dataset: said before anything runs, naming outputs.
  ProcessResult npy = Convgate({"run", Model("tinycnn.onnx"), "--save-outputs", Path("y.npy")});
  EXPECT_EQ(npy.exit_code, 2) << Describe(npy);
  EXPECT_NE(npy.err.find("--save-outputs " + Path("y.npy") + ": an .npy holds one tensor"),
            std::string::npos)
      << npy.err;
}

// Issue 9: `compare a.npy b.npy` exited 3 ("the model has 0 inputs; use an .npz").
TEST_F(SavedDataCliTest, SingleNpyOutputsCompare) {
  const std::string a = Npy("a.npy", Floats({1, 2, 3}));
  const std::string b = Npy("b.npy", Floats({1, 2, 3.5}));
  ProcessResult same = Convgate({"compare", a, a});
  EXPECT_EQ(same.exit_code, 0) << Describe(same);
  ProcessResult differ = Convgate({"compare", a, b, "--json"});
  ASSERT_EQ(differ.exit_code, 1) << Describe(differ);
  EXPECT_EQ(json::parse(differ.out)["results"][0]["stats"]["worst_element"]["index"], json({2}));
  // Against an .npz of one named tensor, the .npy takes its name.
  ProcessResult named = Convgate({"compare", Npz("one.npz", {{"y", {1, 2, 3}}}), a});
  EXPECT_EQ(named.exit_code, 0) << Describe(named);
  EXPECT_NE(named.out.find("outputs matched by position to the source's (a.npy names none): "
                           "a -> y"),
            std::string::npos)
      << named.out;
}

TEST_F(SavedDataCliTest, ASingleNpyStandsForAModelsOnlyOutput) {
  if (!fs::is_directory(kAbsCase)) GTEST_SKIP() << "libonnx-testdata is not installed";
  Result<std::vector<io::TestDataSet>> sets = io::ReadTestCase(kAbsCase / "test_data_set_0", {});
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_TRUE(io::WriteNpz(dir_ / "x.npz", (*sets)[0].inputs).ok());
  const std::string expected = Npy("expected.npy", (*sets)[0].outputs[0].tensor.Clone());
  ProcessResult r = Convgate({"compare", expected, (kAbsCase / "model.onnx").string(),
                              "--load-inputs", Path("x.npz"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = json::parse(r.out);
  EXPECT_EQ(report["results"][0]["output"], "y");
  EXPECT_EQ(report["source"]["output_matching"], "position");
}

// Issue 9: np.savez(f, a, b) against a named .npz matched nothing.
TEST_F(SavedDataCliTest, PositionalNpzMatchesANamedNpz) {
  const std::string named = Npz("named.npz", {{"logits", {1, 2}}, {"probs", {0.25f, 0.75f}}});
  const std::string positional =
      Npz("positional.npz", {{"arr_0", {1, 2}}, {"arr_1", {0.25f, 0.75f}}});
  ProcessResult r = Convgate({"compare", named, positional, "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = json::parse(r.out);
  EXPECT_EQ(report["target"]["output_matching"], "position");
  EXPECT_EQ(report["target"]["output_renames"], json({"arr_0 -> logits", "arr_1 -> probs"}));
  ProcessResult reversed = Convgate({"compare", positional, named});
  EXPECT_EQ(reversed.exit_code, 0) << Describe(reversed);
  ProcessResult count = Convgate(
      {"compare", Npz("three.npz", {{"arr_0", {1}}, {"arr_1", {2}}, {"arr_2", {3}}}), named});
  EXPECT_EQ(count.exit_code, 1) << Describe(count);
  EXPECT_NE(count.out.find("structure: outputs cannot be matched by position: the source "
                           "(three.npz) names no outputs and holds 3 (arr_0, arr_1, arr_2), the "
                           "target has 2 (logits, probs)"),
            std::string::npos)
      << count.out;
}

// Issue 9: `compare empty.npz empty.npz` passed with "0 of 0 checks".
TEST_F(SavedDataCliTest, ComparingNothingFails) {
  const std::string empty = Npz("empty.npz", {});
  ProcessResult r = Convgate({"compare", empty, empty, "--out", Path("out")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("structure: nothing was compared: neither the source"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL: no output compared"), std::string::npos) << r.out;
  std::ifstream verify_file(dir_ / "out" / "verify_result.json");
  const json verify = json::parse(verify_file);
  EXPECT_EQ(verify["verify_passed"], false);
  EXPECT_EQ(verify["error"].get<std::string>().rfind("nothing was compared", 0), 0u) << verify;
  // `check` re-judges the saved report: still nothing compared, still a failure.
  ProcessResult check = Convgate({"check", (dir_ / "out" / "report.json").string()});
  EXPECT_EQ(check.exit_code, 1) << Describe(check);
}

}  // namespace
}  // namespace convgate
