// The tolerance policy from the command line, end to end with the real binary: every knob, the
// policy file, per-dtype defaults, and `convgate check` re-judging a saved report with the same
// verdicts as a fresh `convgate compare` (or "indeterminate" where the histograms cannot decide).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/compare/error_summary.h"
#include "convgate/io/npz.h"
#include "testing/cli_fixture.h"
#include "testing/subprocess.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::HintsOf;
using testing::ProcessResult;
using Args = std::vector<std::string>;

const fs::path kModels = fs::path(CONVGATE_BINARY_DIR) / "examples";

std::string Num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

std::string Model(const std::string& name) { return (kModels / name).string(); }

class PolicyCliTest : public testing::CliTest {
 protected:
  // `compare` of the clean model against the 1% weight perturbation, with extra flags.
  ProcessResult ComparePerturbed(const Args& extra) {
    Args args{"compare", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx"), "--samples", "3"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Convgate(args);
  }

  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  json ReadJson(const fs::path& path) const {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "missing " << path;
    return json::parse(in);
  }
};

TEST_F(PolicyCliTest, BadPolicyFlagsAreUsageErrorsBeforeAnyModelLoads) {
  const std::string unknown_key = Write("bad.yaml", "rtol: 0.01\noutputs:\n  logits: {atoll: 1}\n");
  struct Case {
    Args flags;
    std::string message;
  };
  const Case cases[] = {
      {{"--check-error-stat", "p101"}, "--check-error-stat: invalid check-error-stat 'p101'"},
      {{"--check-error-stat", "logits:maximum"}, "'maximum' is not an error statistic"},
      {{"--mismatch-ppm", "-1"}, "--mismatch-ppm: invalid mismatch ppm '-1'"},
      {{"--min-cosine", "2"}, "a cosine similarity must be in [-1, 1], got 2"},
      {{"--min-snr-db", "logits:x"}, "--min-snr-db: invalid min SNR 'logits:x'"},
      {{"--policy", (dir_ / "missing.yaml").string()}, "missing.yaml: cannot be read"},
      {{"--policy", unknown_key}, "bad.yaml: line 3: outputs.logits: unknown key 'atoll'"},
  };
  for (const Case& c : cases) {
    // The models do not exist: a flag error must come first.
    Args args{"compare", (dir_ / "no_source.onnx").string(), (dir_ / "no_target.onnx").string()};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << Describe(r);
    Args check{"check", (dir_ / "no_report.json").string()};
    check.insert(check.end(), c.flags.begin(), c.flags.end());
    EXPECT_EQ(Convgate(check).exit_code, 2) << c.message;
  }
}

TEST_F(PolicyCliTest, PerOutputSettingForAnUnknownOutputIsAUsageError) {
  for (const Args& flags : {Args{"--check-error-stat", "logit:max"},
                            Args{"--min-cosine", "prob:0.9"}, Args{"--mismatch-ppm", "logit:5"}}) {
    ProcessResult r = ComparePerturbed(flags);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find("names output"), std::string::npos) << Describe(r);
  }
}

// Each knob from the command line on the perturbed model (max |diff| ~0.015 for logits, ~0.0018
// for probs; SNR ~40 dB; 10 of 10 logits and 9 of 10 probs outside the default tolerance).
TEST_F(PolicyCliTest, EveryKnobFromTheCommandLine) {
  struct Case {
    Args flags;
    int exit_code;
    std::string in_output;
  };
  const Case cases[] = {
      {{}, 1, "outside atol 1e-05"},
      {{"--check-error-stat", "max", "--atol", "0.02"}, 0, ""},
      {{"--check-error-stat", "max", "--atol", "0.001", "--rtol", "0.001"},
       1,
       "(--check-error-stat max)"},
      {{"--check-error-stat", "mean", "--atol", "0.01"}, 0, ""},
      {{"--check-error-stat", "p99", "--atol", "0.001", "--rtol", "0"}, 1, "p99 |diff|"},
      {{"--check-error-stat", "median", "--atol", "0.01"}, 0, ""},
      {{"--mismatch-ppm", "1000000"}, 0, ""},
      {{"--mismatch-ppm", "950000"},
       1,
       "1000000 ppm of elements outside tolerance > allowed 950000 ppm"},
      {{"--mismatch-ppm", "1e6", "--min-snr-db", "50"}, 1, "dB < min 50 dB"},
      {{"--mismatch-ppm", "1e6", "--min-snr-db", "30", "--min-cosine", "0.99"}, 0, ""},
      {{"--mismatch-ppm", "1e6", "--min-cosine", "0.99999999"}, 1, "< min 0.99999999"},
      {{"--check-error-stat", "logits:max", "--atol", "logits:0.02", "--atol", "probs:0.002"},
       0,
       ""},
      {{"--check-error-stat", "logits:max", "--atol", "logits:0.02"}, 1, "output 'probs'"},
  };
  for (const Case& c : cases) {
    ProcessResult r = ComparePerturbed(c.flags);
    EXPECT_EQ(r.exit_code, c.exit_code) << Describe(r);
    EXPECT_NE(r.out.find(c.in_output), std::string::npos) << Describe(r);
  }
}

TEST_F(PolicyCliTest, PolicyFileAppliesAndFlagsOverrideIt) {
  const std::string file = Write("policy.yaml",
                                 "check_error_stat: max\n"
                                 "atol: 1e-5\n"
                                 "outputs:\n"
                                 "  logits: {atol: 0.02}\n"
                                 "  probs: {atol: 0.002, min_snr_db: 20}\n");
  ProcessResult passed = ComparePerturbed({"--policy", file, "--out", (dir_ / "out").string()});
  ASSERT_EQ(passed.exit_code, 0) << Describe(passed);
  const json report = ReadJson(dir_ / "out" / "report.json");
  EXPECT_EQ(report["policy"]["global_settings"]["check_error_stat"], "max");
  EXPECT_EQ(report["policy"]["per_output"]["probs"]["min_snr_db"], 20.0);
  const json& logits = report["results"][0];
  EXPECT_EQ(logits["policy"]["atol"], 0.02);
  EXPECT_EQ(logits["policy"]["atol_origin"], "output setting");
  EXPECT_EQ(logits["policy"]["check_error_stat"], "max");
  EXPECT_EQ(logits["verdict_basis"], "exact");
  // 10 elements: the frontier holds every inexact pair, and nothing else is needed.
  EXPECT_TRUE(logits["stats"]["error_summary"]["frontier"]["complete"]);
  EXPECT_FALSE(logits["stats"]["error_summary"]["frontier"]["points"].empty());
  ProcessResult overridden = ComparePerturbed({"--policy", file, "--atol", "logits:1e-5"});
  EXPECT_EQ(overridden.exit_code, 1) << Describe(overridden);
  EXPECT_NE(overridden.out.find("max |diff|"), std::string::npos) << Describe(overridden);
}

// Two saved float16 outputs differing by ~0.3%: beyond LEAPP's float32 defaults, within the
// float16 ones; an explicit --atol/--rtol beats the dtype default.
TEST_F(PolicyCliTest, Float16OutputsGetTheFloat16DefaultsUnlessToleranceIsGiven) {
  const Shape shape = Shape::Of({8});
  Tensor source = std::move(Tensor::Allocate(DType::kFloat16, shape).value());
  Tensor target = std::move(Tensor::Allocate(DType::kFloat16, shape).value());
  for (int64_t idx = 0; idx < 8; ++idx) {
    source.SetDouble(idx, 0.5 + 0.125 * static_cast<double>(idx));
    target.SetDouble(idx, (0.5 + 0.125 * static_cast<double>(idx)) * 1.003);
  }
  TensorMap a, b;
  ASSERT_TRUE(a.Insert("y", std::move(source)).ok());
  ASSERT_TRUE(b.Insert("y", std::move(target)).ok());
  ASSERT_TRUE(io::WriteNpz(dir_ / "a.npz", a).ok());
  ASSERT_TRUE(io::WriteNpz(dir_ / "b.npz", b).ok());
  const std::string a_path = (dir_ / "a.npz").string(), b_path = (dir_ / "b.npz").string();
  ProcessResult defaults = Convgate({"compare", a_path, b_path, "--json"});
  ASSERT_EQ(defaults.exit_code, 0) << Describe(defaults);
  const json result = json::parse(defaults.out)["results"][0];
  EXPECT_EQ(result["policy"]["atol"], 2.5e-3);
  EXPECT_EQ(result["policy"]["rtol"], 5e-3);
  EXPECT_EQ(result["policy"]["rtol_origin"], "float16 default: both outputs are float16");
  ProcessResult explicit_tolerance =
      Convgate({"compare", a_path, b_path, "--atol", "1e-5", "--rtol", "1e-3"});
  EXPECT_EQ(explicit_tolerance.exit_code, 1) << Describe(explicit_tolerance);
}

// The key property: `check` on a saved report gives the verdicts a fresh `compare` gives under the
// same policy. Thresholds are placed well away from the data (factors of 2 and more, not within a
// histogram bucket), so every re-judged verdict is decided.
TEST_F(PolicyCliTest, CheckGivesTheVerdictsOfAFreshCompare) {
  const fs::path saved = dir_ / "saved";
  ProcessResult base = ComparePerturbed({"--out", saved.string()});
  ASSERT_EQ(base.exit_code, 1) << Describe(base);
  const json report = ReadJson(saved / "report.json");
  double max_abs = 0.0, min_max_abs = 1e9, max_p99 = 0.0;
  for (const json& result : report["results"]) {
    const double value = result["stats"]["errors"]["max_abs_error"].get<double>();
    max_abs = std::max(max_abs, value);
    min_max_abs = std::min(min_max_abs, value);
    max_p99 =
        std::max(max_p99, result["stats"]["errors"]["abs_error_percentiles"]["p99"].get<double>());
  }
  const std::vector<Args> policies = {
      {},
      {"--atol", Num(2 * max_abs)},
      {"--check-error-stat", "max", "--atol", Num(min_max_abs / 2), "--rtol", "0"},
      {"--check-error-stat", "mean"},
      {"--check-error-stat", "p99", "--atol", Num(2 * max_p99)},
      {"--check-error-stat", "median", "--atol", "0", "--rtol", "10"},
      {"--check-error-stat", "p90", "--atol", "0", "--rtol", "1e-6"},
      {"--mismatch-ppm", "1000000"},
      {"--mismatch-ppm", "950000"},
      {"--mismatch-ppm", "1e6", "--min-cosine", "0.99999999"},
      {"--mismatch-ppm", "1e6", "--min-snr-db", "30"},
      {"--check-error-stat", "logits:max", "--atol", "logits:1", "--mismatch-ppm", "probs:1e6"},
  };
  for (const Args& policy : policies) {
    Args compare_args = policy;
    compare_args.push_back("--json");
    ProcessResult fresh = ComparePerturbed(compare_args);
    Args check_args{"check", (saved / "report.json").string(), "--json"};
    check_args.insert(check_args.end(), policy.begin(), policy.end());
    ProcessResult rejudged = Convgate(check_args);
    std::string label;
    for (const std::string& arg : policy) label += arg + " ";
    ASSERT_EQ(rejudged.exit_code, fresh.exit_code) << label << "\n" << Describe(rejudged);
    const json fresh_report = json::parse(fresh.out);
    const json check_report = json::parse(rejudged.out);
    EXPECT_EQ(check_report["rejudged_from"], (saved / "report.json").string());
    ASSERT_EQ(check_report["results"].size(), fresh_report["results"].size());
    for (size_t idx = 0; idx < fresh_report["results"].size(); ++idx) {
      const json& expected = fresh_report["results"][idx];
      const json& got = check_report["results"][idx];
      EXPECT_NE(got["verdict_basis"], "indeterminate") << label << idx;
      EXPECT_EQ(got["verdict"], expected["verdict"]) << label << idx << "\n" << got["failures"];
      // A result leaves its policy out when it repeats the previous sample's (absent on both).
      EXPECT_EQ(got.value("policy", json()), expected.value("policy", json())) << label << idx;
    }
  }
}

// A threshold inside the 0.1% box the report keeps of the largest |diff|: `check` cannot decide,
// says so, and fails.
TEST_F(PolicyCliTest, CheckSaysIndeterminateWhenAThresholdFallsInsideAFrontierBox) {
  const fs::path saved = dir_ / "saved";
  ASSERT_EQ(ComparePerturbed({"--out", saved.string()}).exit_code, 1);
  const json report = ReadJson(saved / "report.json");
  const json& logits = report["results"][0];
  ASSERT_EQ(logits["output"], "logits");
  const double max_abs = logits["stats"]["errors"]["max_abs_error"].get<double>();
  const double box_lower = compare::Frontier::BucketLower(compare::Frontier::BucketOf(max_abs));
  ASSERT_LT(box_lower, max_abs);
  const Args policy{"--atol", "logits:" + Num((box_lower + max_abs) / 2), "--rtol", "logits:0"};
  Args check_args{"check", (saved / "report.json").string(), "--out", (dir_ / "check").string()};
  check_args.insert(check_args.end(), policy.begin(), policy.end());
  ProcessResult rejudged = Convgate(check_args);
  EXPECT_EQ(rejudged.exit_code, 1) << Describe(rejudged);
  EXPECT_NE(rejudged.out.find("indeterminate"), std::string::npos) << Describe(rejudged);
  EXPECT_NE(rejudged.out.find("re-run `convgate compare`"), std::string::npos);
  const json check_report = ReadJson(dir_ / "check" / "report.json");
  EXPECT_EQ(check_report["command"], "check");
  EXPECT_EQ(check_report["results"][0]["verdict_basis"], "indeterminate");
  EXPECT_EQ(check_report["results"][0]["verdict"], "fail");
  EXPECT_TRUE(fs::exists(dir_ / "check" / "verify_result.json"));
  EXPECT_TRUE(fs::exists(dir_ / "check" / "junit.xml"));
  // A fresh compare decides the same policy (sample 0's largest element fails it).
  ProcessResult fresh = ComparePerturbed(policy);
  EXPECT_EQ(fresh.exit_code, 1) << Describe(fresh);
  // A re-judged report can itself be re-judged.
  ProcessResult again = Convgate({"check", (dir_ / "check" / "report.json").string(), "--atol",
                                  "logits:1", "--mismatch-ppm", "probs:1e6"});
  EXPECT_EQ(again.exit_code, 0) << Describe(again);
}

// Saved outputs "y" of 512 elements in [0.5, 1.5): every target element off by 0.002 (outside
// the default tolerance, inside atol 0.01), element 7 by 0.05 more.
void WriteOneOutlierPair(const fs::path& dir) {
  const Shape shape = Shape::Of({512});
  Tensor source = std::move(Tensor::Allocate(DType::kFloat32, shape).value());
  Tensor target = std::move(Tensor::Allocate(DType::kFloat32, shape).value());
  for (int64_t idx = 0; idx < 512; ++idx) {
    const double value = 0.5 + static_cast<double>(idx) / 512;
    source.SetDouble(idx, value);
    target.SetDouble(idx, value + 0.002 + (idx == 7 ? 0.05 : 0.0));
  }
  TensorMap a, b;
  ASSERT_TRUE(a.Insert("y", std::move(source)).ok());
  ASSERT_TRUE(b.Insert("y", std::move(target)).ok());
  ASSERT_TRUE(io::WriteNpz(dir / "a.npz", a).ok());
  ASSERT_TRUE(io::WriteNpz(dir / "b.npz", b).ok());
}

std::string Joined(const json& strings) {
  std::string all;
  for (const json& text : strings) all += text.get<std::string>() + "\n";
  return all;
}

// Everything `check` shows comes from the new policy: loosened to atol 0.01, one element of 512
// fails. The mismatch count (table, report.json, junit) is 1, the hints say a few elements are
// affected (not "widespread") and suggest tolerances for the new policy, which then pass.
TEST_F(PolicyCliTest, CheckRecountsHintsAndMismatchesUnderTheNewPolicy) {
  WriteOneOutlierPair(dir_);
  const std::string a = (dir_ / "a.npz").string(), b = (dir_ / "b.npz").string();
  const fs::path saved = dir_ / "saved";
  ASSERT_EQ(Convgate({"compare", a, b, "--out", saved.string()}).exit_code, 1);
  const json original_report = ReadJson(saved / "report.json");
  const json& original = original_report["results"][0];
  EXPECT_EQ(original["judged_mismatches"], 512);
  EXPECT_NE(Joined(HintsOf(original_report, 0)).find("widespread"), std::string::npos)
      << original_report;

  const fs::path rejudged = dir_ / "rejudged";
  ProcessResult check = Convgate(
      {"check", (saved / "report.json").string(), "--atol", "0.01", "--out", rejudged.string()});
  ASSERT_EQ(check.exit_code, 1) << Describe(check);
  EXPECT_NE(check.out.find("1/512"), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("widespread"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("only a few elements are affected"), std::string::npos) << check.out;
  const json rejudged_report = ReadJson(rejudged / "report.json");
  const json& result = rejudged_report["results"][0];
  EXPECT_EQ(result["judged_mismatches"], 1);
  EXPECT_EQ(result["verdict_basis"], "exact");
  EXPECT_NE(Joined(result["failures"]).find("1 of 512 elements"), std::string::npos) << result;
  const std::string hints = Joined(HintsOf(rejudged_report, 0));
  EXPECT_EQ(hints.find("widespread"), std::string::npos) << hints;
  EXPECT_NE(hints.find("(keeping rtol 0.001)"), std::string::npos) << hints;
  EXPECT_NE(hints.find("(keeping atol 0.01)"), std::string::npos) << hints;
  std::ifstream junit(rejudged / "junit.xml");
  const std::string xml((std::istreambuf_iterator<char>(junit)), {});
  EXPECT_NE(xml.find("1 of 512 elements"), std::string::npos) << xml;

  // Under another rtol the suggestion keeps that rtol, and passes.
  ProcessResult other_rtol =
      Convgate({"check", (saved / "report.json").string(), "--rtol", "0.01", "--json"});
  ASSERT_EQ(other_rtol.exit_code, 1) << Describe(other_rtol);
  const std::string other_hints = Joined(HintsOf(json::parse(other_rtol.out), 0));
  const size_t at = other_hints.find("--atol y:");
  ASSERT_NE(at, std::string::npos) << other_hints;
  EXPECT_NE(other_hints.find("(keeping rtol 0.01)"), std::string::npos) << other_hints;
  const std::string suggested = other_hints.substr(at + 9, other_hints.find(' ', at + 9) - at - 9);
  ProcessResult applied =
      Convgate({"check", (saved / "report.json").string(), "--rtol", "0.01", "--atol", suggested});
  EXPECT_EQ(applied.exit_code, 0) << suggested << "\n" << Describe(applied);
}

// The tolerances a failing compare's hints suggest are decided by `check` on its report (they are
// what the report's error summary proves), and pass, as they do in a fresh compare.
TEST_F(PolicyCliTest, CheckDecidesTheTolerancesTheHintsSuggest) {
  const fs::path saved = dir_ / "saved";
  ASSERT_EQ(ComparePerturbed({"--out", saved.string()}).exit_code, 1);
  const json report = ReadJson(saved / "report.json");
  Args suggested;
  for (const std::string output : {"logits", "probs"}) {
    for (size_t index = 0; index < report["results"].size(); ++index) {
      const std::string hints = Joined(HintsOf(report, index));
      if (report["results"][index]["output"] != output || hints.empty()) continue;
      const size_t at = hints.find("--atol " + output + ":");
      ASSERT_NE(at, std::string::npos) << hints;
      suggested.push_back("--atol");
      suggested.push_back(hints.substr(at + 7, hints.find(' ', at + 7) - at - 7));
      break;
    }
  }
  ASSERT_EQ(suggested.size(), 4u);
  Args check_args{"check", (saved / "report.json").string(), "--json"};
  check_args.insert(check_args.end(), suggested.begin(), suggested.end());
  ProcessResult rejudged = Convgate(check_args);
  EXPECT_EQ(rejudged.exit_code, 0) << Describe(rejudged);
  for (const json& result : json::parse(rejudged.out)["results"]) {
    EXPECT_NE(result["verdict_basis"], "indeterminate") << result;
  }
  EXPECT_EQ(ComparePerturbed(suggested).exit_code, 0);
}

// report.json stays small with many samples: compact JSON and a bounded error summary per result
// (docs/guide.md, "Result files": under 250 KB per 100 output checks for a passing report).
TEST_F(PolicyCliTest, ReportSizePerOutputCheckIsBounded) {
  for (const char* target : {"tinycnn_converted.onnx", "tinycnn_perturbed.onnx"}) {
    const fs::path out = dir_ / target;
    ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model(target), "--samples", "200",
                                "--out", out.string()});
    ASSERT_LE(r.exit_code, 1) << Describe(r);
    const json report = ReadJson(out / "report.json");
    const auto checks = static_cast<double>(report["results"].size());
    ASSERT_EQ(checks, 400);
    const double per_check = static_cast<double>(fs::file_size(out / "report.json")) / checks;
    // The budget: under 250 KB per 100 output checks. Measured: 1.4 KB per passing check, 1.8 KB
    // per failing one.
    EXPECT_LT(per_check, 2500) << target;
  }
}

// The budget holds for a failing output of 1000 elements too (resnet18's logits against an fp16
// copy measured 2.4 KB a check): 100 samples of a widespread, fp16-sized difference.
TEST_F(PolicyCliTest, ReportSizeStaysInBudgetForAWidespreadFailureOf1000Elements) {
  TensorMap source, target;
  for (int sample = 0; sample < 100; ++sample) {
    Tensor a = std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({1, 1000})).value());
    Tensor b = std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({1, 1000})).value());
    for (int64_t idx = 0; idx < 1000; ++idx) {
      const double value = 3.0 * std::sin(0.013 * static_cast<double>(idx * (sample + 7)));
      a.SetDouble(idx, value);
      b.SetDouble(idx, value + 2e-3 * std::cos(static_cast<double>(idx + sample)));
    }
    const std::string prefix = "sample_" + std::to_string(sample) + "/";
    ASSERT_TRUE(source.Insert(prefix + "logits", std::move(a)).ok());
    ASSERT_TRUE(target.Insert(prefix + "logits", std::move(b)).ok());
  }
  ASSERT_TRUE(io::WriteNpz(dir_ / "a.npz", source).ok());
  ASSERT_TRUE(io::WriteNpz(dir_ / "b.npz", target).ok());
  const fs::path out = dir_ / "wide";
  ProcessResult r = Convgate(
      {"compare", (dir_ / "a.npz").string(), (dir_ / "b.npz").string(), "--out", out.string()});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  const json report = ReadJson(out / "report.json");
  ASSERT_EQ(report["results"].size(), 100u);
  ASSERT_EQ(report["summary"]["failed"], 100);
  // The hints every sample gives are in the output's row, not in each result.
  EXPECT_FALSE(report["aggregates"][0]["hints"].empty()) << report["aggregates"];
  EXPECT_FALSE(report["results"][99].contains("hints")) << report["results"][99];
  EXPECT_LT(fs::file_size(out / "report.json"), 250'000u);
}

// Classifier agreement does not depend on the policy: `check` carries a failed agreement check
// over, so a looser tolerance cannot make that report pass.
TEST_F(PolicyCliTest, CheckCarriesAgreementVerdictsOver) {
  const fs::path saved = dir_ / "saved";
  ASSERT_EQ(ComparePerturbed({"--agreement", "logits:flips==1", "--out", saved.string()}).exit_code,
            1);
  ProcessResult rejudged =
      Convgate({"check", (saved / "report.json").string(), "--mismatch-ppm", "1e6", "--json"});
  EXPECT_EQ(rejudged.exit_code, 1) << Describe(rejudged);
  const json report = json::parse(rejudged.out);
  EXPECT_EQ(report["summary"]["failed"], 0);
  EXPECT_EQ(report["summary"]["agreement_checks_failed"], 1);
  EXPECT_EQ(report["agreements"][0]["checks"][0]["check"], "logits:flips==1");
  EXPECT_EQ(report["agreements"][0]["rows"], 3);
}

TEST_F(PolicyCliTest, CheckRejectsWhatIsNotACompareReport) {
  const fs::path run_out = dir_ / "run";
  ASSERT_EQ(Convgate({"run", Model("tinycnn.onnx"), "--out", run_out.string()}).exit_code, 0);
  const fs::path saved = dir_ / "saved";
  ASSERT_EQ(ComparePerturbed({"--out", saved.string()}).exit_code, 1);
  json other_schema = ReadJson(saved / "report.json");
  other_schema["schema_version"] = 99;
  json mistyped = ReadJson(saved / "report.json");
  mistyped["results"][1]["stats"]["errors"]["max_abs_error"] = "large";
  struct Case {
    std::string path;
    std::string message;
  };
  const Case cases[] = {
      {(dir_ / "missing.json").string(), "missing.json: no such report file"},
      {Write("corrupt.json", "{\"schema_version\": 1, "), "corrupt.json: not a JSON report"},
      {(run_out / "report.json").string(), "command: 'run': not a compare report"},
      {Write("schema.json", other_schema.dump()),
       "schema_version: is 99, but this convgate reads 1 to 2"},
      {Write("mistyped.json", mistyped.dump()),
       "results[1].stats.errors.max_abs_error: expected a number, got the string \"large\""},
  };
  for (const Case& c : cases) {
    ProcessResult r = Convgate({"check", c.path});
    EXPECT_EQ(r.exit_code, 3) << Describe(r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << Describe(r);
  }
}

}  // namespace
}  // namespace convgate
