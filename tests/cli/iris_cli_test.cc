// ONNX Runtime's train-convert-predict reference workflow, end to end
// (docs/architecture.md): sklearn trains a logistic regression
// on iris and saves its test-split predictions (tests/fixtures/iris_logreg.py); the equivalent ONNX
// model is built from the trained coefficients by committed code (tools/make_logreg.cc); then
// `convgate compare` of the saved predictions against the ONNX model must show a diagonal
// confusion matrix and pass, and a wrong coefficient must fail with off-diagonal entries.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/io/npz.h"
#include "testing/subprocess.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;

const fs::path kBinary = fs::path(CONVGATE_BINARY_DIR) / "src/cli/convgate";
const fs::path kMakeLogreg = fs::path(CONVGATE_BINARY_DIR) / "convgate-make-logreg";
const fs::path kScript = fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/iris_logreg.py";
// Debian's python3 has python3-sklearn (scripts/setup.sh); the pyenv python on PATH does not.
constexpr char kPython[] = "/usr/bin/python3";
// coef[2][2] (class 2, petal length) lowered by 0.25: seven test rows move from class 2 to 1 (the
// test asserts at least one does, so a retrained model cannot make this pass silently).
constexpr char kPerturbation[] = "2,2,-0.25";

std::string Describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

class IrisWorkflowTest : public ::testing::Test {
 protected:
  // Trains and converts once for the suite (about a second); each test then runs convgate.
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("convgate_iris_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (testing::RunProcess({kPython, "-c", "import sklearn"}).exit_code != 0) {
      skip_reason_ = std::string(kPython) + " cannot import sklearn: run scripts/setup.sh";
      return;
    }
    ProcessResult trained = testing::RunProcess({kPython, kScript.string(), dir_.string()});
    ASSERT_EQ(trained.exit_code, 0) << Describe(trained);
    const std::string coefficients = (dir_ / "coefficients.npz").string();
    ProcessResult good =
        testing::RunProcess({kMakeLogreg.string(), coefficients, Path("logreg.onnx")});
    ASSERT_EQ(good.exit_code, 0) << Describe(good);
    ProcessResult wrong =
        testing::RunProcess({kMakeLogreg.string(), coefficients, Path("logreg_wrong.onnx"),
                             "--perturb", kPerturbation});
    ASSERT_EQ(wrong.exit_code, 0) << Describe(wrong);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(fs::exists(dir_ / "logreg_wrong.onnx")) << "suite set-up failed";
  }

  static std::string Path(const std::string& name) { return (dir_ / name).string(); }

  static ProcessResult Compare(const std::string& model, std::vector<std::string> extra) {
    std::vector<std::string> args{kBinary.string(), "compare",       Path("predictions.npz"),
                                  Path(model),      "--load-inputs", Path("inputs.npz")};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult result = testing::RunProcess(args);
    EXPECT_EQ(result.signal, 0) << "convgate crashed; stderr:\n" << result.err;
    return result;
  }

  static const json& Agreement(const json& report, const std::string& output) {
    for (const json& record : report["agreements"]) {
      if (record["output"] == output) return record;
    }
    ADD_FAILURE() << "no agreement record for '" << output << "' in " << report["agreements"];
    static const json kNull;
    return kNull;
  }

  // label -> rows sklearn predicted it, from the saved predictions themselves.
  static std::map<int64_t, int64_t> PredictedPerClass() {
    Result<TensorMap> predictions = io::ReadNpz(Path("predictions.npz"));
    EXPECT_TRUE(predictions.ok()) << predictions.status().ToString();
    std::map<int64_t, int64_t> counts;
    if (!predictions.ok()) return counts;
    for (int64_t label : predictions->Find("label")->data<int64_t>()) ++counts[label];
    return counts;
  }

  static std::map<int64_t, int64_t> DiagonalOf(const json& record) {
    std::map<int64_t, int64_t> diagonal;
    for (const json& cell : record["confusion"]["diagonal"]) {
      diagonal[cell["label"].get<int64_t>()] = cell["count"].get<int64_t>();
    }
    return diagonal;
  }

  static inline fs::path dir_;
  static inline std::string skip_reason_;
};

TEST_F(IrisWorkflowTest, TheConvertedModelPassesWithADiagonalConfusionMatrix) {
  ProcessResult r = Compare("logreg.onnx", {"--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = json::parse(r.out);
  EXPECT_EQ(report["verdict"], "pass");

  const json& label = Agreement(report, "label");
  EXPECT_EQ(label["selected_by"], "detected");
  EXPECT_EQ(label["kind"], "labels");
  EXPECT_TRUE(label["diagonal"].get<bool>());
  EXPECT_TRUE(label["confusion"]["off_diagonal"].empty());
  const std::map<int64_t, int64_t> per_class = PredictedPerClass();
  ASSERT_EQ(per_class.size(), 3u);  // all three iris species are predicted on the test split
  EXPECT_EQ(DiagonalOf(label), per_class);
  int64_t rows = 0;
  for (const auto& [cls, count] : per_class) rows += count;
  EXPECT_EQ(label["rows"], rows);
  // Dense form: the identity pattern with the per-class counts on the diagonal.
  const json& dense = label["confusion"]["dense"];
  ASSERT_EQ(dense["labels"], json({0, 1, 2}));
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 3; ++col) {
      EXPECT_EQ(dense["matrix"][row][col], row == col ? per_class.at(row) : 0);
    }
  }

  const json& probabilities = Agreement(report, "probabilities");
  EXPECT_EQ(probabilities["kind"], "scores");
  EXPECT_EQ(probabilities["top1"]["rate"], 1.0);
  EXPECT_EQ(probabilities["top1"]["agree"], rows);
  EXPECT_EQ(probabilities["flips"], 0);
  EXPECT_TRUE(probabilities["diagonal"].get<bool>());
}

TEST_F(IrisWorkflowTest, AgreementChecksPassAndReachEveryResultFile) {
  ProcessResult r = Compare(
      "logreg.onnx", {"--agreement", "label:diagonal", "--agreement", "probabilities:top1>=1",
                      "--agreement", "probabilities:flip_rate<=0", "--out", Path("ok")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("confusion 'label'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 agreement check(s) passed"), std::string::npos) << r.out;
  std::ifstream report_file(dir_ / "ok" / "report.json");
  const json report = json::parse(report_file);
  EXPECT_EQ(Agreement(report, "label")["selected_by"], "named");
  EXPECT_EQ(report["summary"]["agreement_checks"], 3);
  EXPECT_EQ(report["summary"]["agreement_checks_failed"], 0);
  std::ifstream junit(dir_ / "ok" / "junit.xml");
  const std::string xml((std::istreambuf_iterator<char>(junit)), {});
  EXPECT_NE(xml.find("name=\"agreement / label:diagonal\""), std::string::npos) << xml;
}

TEST_F(IrisWorkflowTest, AWrongCoefficientFailsWithOffDiagonalEntries) {
  ProcessResult r = Compare("logreg_wrong.onnx", {"--json"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  const json report = json::parse(r.out);
  EXPECT_EQ(report["verdict"], "fail");
  const json& label = Agreement(report, "label");
  EXPECT_FALSE(label["diagonal"].get<bool>());
  const json& cells = label["confusion"]["off_diagonal"];
  ASSERT_FALSE(cells.empty()) << "the perturbation flipped no test prediction";
  EXPECT_GE(label["off_diagonal_rows"].get<int64_t>(), 1);
  EXPECT_EQ(label["flips"], label["off_diagonal_rows"]);
  // Agreement explains the exact comparison's failure: as many labels differ as cells count.
  for (const json& check : report["results"]) {
    if (check["output"] != "label") continue;
    EXPECT_EQ(check["verdict"], "fail");
    EXPECT_EQ(check["stats"]["mismatches"], label["off_diagonal_rows"]);
  }
  EXPECT_LT(Agreement(report, "probabilities")["top1"]["rate"].get<double>(), 1.0);

  // The console names the off-diagonal cells and the check's sentence names the commonest one.
  ProcessResult text = Compare("logreg_wrong.onnx", {"--agreement", "label:diagonal"});
  ASSERT_EQ(text.exit_code, 1) << Describe(text);
  const std::string source = std::to_string(cells[0]["source"].get<int64_t>());
  const std::string target = std::to_string(cells[0]["target"].get<int64_t>());
  EXPECT_NE(text.out.find("output 'label': confusion matrix is not diagonal"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("most common: label " + source + " -> " + target), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("1 of 1 agreement check(s) failed"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace convgate
