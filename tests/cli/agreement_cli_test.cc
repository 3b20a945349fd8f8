// `compare --agreement / --classifier / --flip-margin` on the real binary, with saved outputs on
// both sides (no model needed): what gates, what only reports, and the usage errors.
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

const fs::path kBinary = fs::path(CONVGATE_BINARY_DIR) / "src/cli/convgate";

using testing::Describe;

class AgreementCliTest : public testing::CliTest {
 protected:
  // Row 0 is a near-tie the target resolves the other way by one float32 ulp (well within any
  // tolerance); row 1 is a clear prediction both sides share.
  void SetUp() override {
    testing::CliTest::SetUp();
    const float tie = 0.50000006f;  // the float32 after 0.5
    Write("source.npz", {0.1f, 0.5f, tie, 0.9f, 0.05f, 0.05f});
    Write("target.npz", {0.1f, tie, 0.5f, 0.9f, 0.05f, 0.05f});
  }
  void Write(const std::string& name, const std::vector<float>& logits) {
    TensorMap tensors;
    ASSERT_TRUE(
        tensors.Insert("logits", Tensor::FromVector(DType::kFloat32, Shape::Of({2, 3}), logits))
            .ok());
    ASSERT_TRUE(io::WriteNpz(dir_ / name, tensors).ok());
  }

  ProcessResult Compare(std::vector<std::string> extra) {
    std::vector<std::string> args{"compare", Path("source.npz"), Path("target.npz")};
    args.insert(args.end(), extra.begin(), extra.end());
    return Convgate(args);
  }
};

TEST_F(AgreementCliTest, DetectionReportsButDoesNotGate) {
  ProcessResult r = Compare({"--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = json::parse(r.out);
  ASSERT_EQ(report["agreements"].size(), 1u);
  const json& logits = report["agreements"][0];
  EXPECT_EQ(logits["selected_by"], "detected");
  EXPECT_EQ(logits["top1"]["agree"], 1);
  EXPECT_EQ(logits["top1"]["rate"], 0.5);
  EXPECT_FALSE(logits["diagonal"].get<bool>());
  EXPECT_EQ(logits["confusion"]["off_diagonal"],
            json::parse(R"([{"source": 2, "target": 1, "count": 1}])"));
  EXPECT_EQ(report["summary"]["agreement_checks"], 0);
}

TEST_F(AgreementCliTest, AFailedAgreementCheckAloneFailsTheGate) {
  const std::string out = (dir_ / "out").string();
  ProcessResult r = Compare({"--agreement", "logits:top1>=1", "--out", out});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  const std::string sentence =
      "output 'logits': top-1 agreement 0.5000 (1 of 2 rows) < required 1; 1 row changed "
      "prediction, most common: class 2 -> 1 (1 row)";
  EXPECT_NE(r.out.find(sentence), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 of 1 agreement check(s) failed"), std::string::npos) << r.out;
  std::ifstream verify_file(dir_ / "out" / "verify_result.json");
  const json verify = json::parse(verify_file);
  EXPECT_FALSE(verify["verify_passed"].get<bool>());
  EXPECT_EQ(verify["error"], "agreement check failed: " + sentence);
  std::ifstream report_file(dir_ / "out" / "report.json");
  const json report = json::parse(report_file);
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_EQ(report["agreements"][0]["selected_by"], "named");
  EXPECT_EQ(report["agreements"][0]["checks"][0]["verdict"], "fail");
  EXPECT_EQ(report["summary"]["first_agreement_failure"], sentence);
}

// The flip is a one-ulp tie-break: a flip margin above it excludes the row, top-1 still counts it.
TEST_F(AgreementCliTest, TheFlipMarginExcludesNearTies) {
  ProcessResult r = Compare({"--agreement", "logits:flips==0", "--agreement", "logits:top2>=1",
                             "--flip-margin", "0.001", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json logits = json::parse(r.out)["agreements"][0];
  EXPECT_EQ(logits["margin_rows"], 1);
  EXPECT_EQ(logits["flips"], 0);
  EXPECT_EQ(logits["top1"]["agree"], 1);
  EXPECT_EQ(logits["flip_margin"], 0.001);
  ProcessResult strict = Compare({"--agreement", "logits:flips==0"});
  EXPECT_EQ(strict.exit_code, 1) << Describe(strict);
}

TEST_F(AgreementCliTest, ClassifierNamesAnOutputDetectionWouldMiss) {
  TensorMap tensors;
  ASSERT_TRUE(tensors
                  .Insert("y", Tensor::FromVector(DType::kFloat32, Shape::Of({1, 2, 2}),
                                                  std::vector<float>{1, 0, 0, 1}))
                  .ok());
  ASSERT_TRUE(io::WriteNpz(dir_ / "y.npz", tensors).ok());
  const std::string y = (dir_ / "y.npz").string();
  ProcessResult plain = testing::RunProcess({kBinary.string(), "compare", y, y, "--json"});
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  EXPECT_TRUE(json::parse(plain.out)["agreements"].empty());
  ProcessResult named =
      testing::RunProcess({kBinary.string(), "compare", y, y, "--classifier", "y", "--json"});
  ASSERT_EQ(named.exit_code, 0) << Describe(named);
  const json record = json::parse(named.out)["agreements"][0];
  EXPECT_EQ(record["selected_by"], "named");
  EXPECT_EQ(record["rows"], 2);  // rank 3: the leading axes are rows
}

TEST_F(AgreementCliTest, BadChecksAreUsageErrorsBeforeAnythingLoads) {
  const struct {
    std::vector<std::string> flags;
    std::string message;
  } cases[] = {
      {{"--agreement", "logits:top1>>1"}, "--agreement: invalid agreement check 'logits:top1>>1'"},
      {{"--agreement", "logits:accuracy>=1"}, "unknown metric 'accuracy'"},
      {{"--agreement", "logits:top1>=2"}, "a rate is a fraction in [0, 1]"},
      {{"--classifier", ""}, "--classifier: the output name is empty"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{kBinary.string(), "compare", "/nonexistent/a.onnx",
                                  "/nonexistent/b.onnx"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    ProcessResult r = testing::RunProcess(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << Describe(r);
  }
  ProcessResult margin = Compare({"--flip-margin", "-1"});
  EXPECT_EQ(margin.exit_code, 2) << Describe(margin);
}

TEST_F(AgreementCliTest, ANameNeitherSideHasIsAUsageError) {
  ProcessResult r = Compare({"--agreement", "logit:diagonal"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("output 'logit', which neither side has (source outputs: logits)"),
            std::string::npos)
      << Describe(r);
}

}  // namespace
}  // namespace convgate
