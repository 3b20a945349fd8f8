// Rendering of gate results: verify_result.json's exact schema, report.json's encoding of
// non-finite numbers, JUnit counts and escaping, and the console table.
#include "convgate/report/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "report/json_util.h"
#include "report/table.h"

namespace convgate::report {
namespace {

using nlohmann::json;

gate::SideRecord Side(const std::string& role, const std::string& path) {
  gate::SideRecord side;
  side.role = role;
  side.path = path;
  side.kind = "model";
  side.format = "onnx";
  side.backend = "ort";
  side.backend_version = "1.29.0";
  return side;
}

gate::CompareReport FailingCompare() {
  gate::CompareReport report;
  report.source = Side("source", "a.onnx");
  report.target = Side("target", "b.onnx");
  report.inputs.origin = "generated (seed 1, 1 sample): x uniform [0, 1)";
  report.inputs.samples = 1;
  const compare::Tolerance tolerance;
  for (const char* name : {"ok", "bad<&>"}) {
    gate::OutputCheck check;
    check.output = name;
    check.tolerance = tolerance;
    const bool bad = std::string(name) != "ok";
    std::vector<float> target = {1.0f, bad ? std::nanf("") : 2.0f};
    check.comparison = compare::CompareTensors(
        Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2}), {1.0f, 2.0f}),
        Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2}), target), tolerance);
    check.passed = check.comparison->passed;
    check.failures = check.comparison->failures;
    report.checks.push_back(std::move(check));
  }
  report.verdict = gate::Verdict::kFail;
  return report;
}

std::vector<std::string> Keys(const json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

const std::vector<std::string> kVerifyKeys = {"conversion_path", "e2e_detail", "e2e_passed",
                                              "error",           "task",       "verify_passed"};

TEST(VerifyResult, HasExactlyTheReferenceFields) {
  gate::CompareReport failing = FailingCompare();
  json verify = VerifyResultJson(failing);
  EXPECT_EQ(Keys(verify), kVerifyKeys);
  EXPECT_FALSE(verify["verify_passed"].get<bool>());
  // The target produced a NaN the source did not: end-to-end inference is not sane.
  EXPECT_FALSE(verify["e2e_passed"].get<bool>());
  EXPECT_EQ(
      verify["error"].get<std::string>().rfind("sample 0, output 'bad<&>': introduced NaN", 0), 0u)
      << verify["error"];
  EXPECT_TRUE(verify["conversion_path"].is_null());
  EXPECT_TRUE(verify["task"].is_null());

  gate::RunReport errored;
  errored.model = Side("model", "m.onnx");
  errored.error = gate::GateError{gate::Stage::kLoad, Status::DataLoss("m.onnx: truncated")};
  json run = VerifyResultJson(errored);
  EXPECT_EQ(Keys(run), kVerifyKeys);
  EXPECT_FALSE(run["e2e_passed"].get<bool>());
  EXPECT_EQ(run["error"], "m.onnx: truncated");
}

TEST(ReportJson, NonFiniteNumbersAreStrings) {
  EXPECT_EQ(internal::Number(std::nan("")), "nan");
  EXPECT_EQ(internal::Number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(internal::Number(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(internal::Number(0.25), 0.25);
  Invocation invocation{"compare", {"convgate", "compare"}, "2026-01-01T00:00:00Z", 1.5};
  json report = ReportJson(FailingCompare(), invocation);
  EXPECT_EQ(report["schema_version"], kSchemaVersion);
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_EQ(report["exit_code"], 1);
  EXPECT_EQ(report["summary"]["failed"], 1);
  EXPECT_EQ(report["summary"]["first_failure"]["output"], "bad<&>");
  const json& stats = report["results"][1]["stats"];
  EXPECT_EQ(stats["non_finite"]["introduced_nan"], 1);
  EXPECT_EQ(stats["worst_element"]["target"], "nan");
  // It must serialize: no NaN may reach the JSON writer.
  EXPECT_NO_THROW(report.dump());
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Compact by default: one line per file, which is what keeps a many-sample report small. Pretty
// indents, and both parse to the same document.
TEST(ResultFiles, CompactUnlessPretty) {
  const gate::CompareReport report = FailingCompare();
  Invocation invocation;
  invocation.command = "compare";
  const json report_json = ReportJson(report, invocation);
  const json verify = VerifyResultJson(report);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("convgate_result_files_" + std::to_string(::getpid()));
  ASSERT_TRUE(WriteResultFiles(dir / "compact", report_json, verify, "").ok());
  ASSERT_TRUE(WriteResultFiles(dir / "pretty", report_json, verify, "", {.pretty = true}).ok());
  for (const char* file : {"report.json", "verify_result.json"}) {
    const std::string compact = ReadFile(dir / "compact" / file);
    const std::string pretty = ReadFile(dir / "pretty" / file);
    EXPECT_EQ(std::count(compact.begin(), compact.end(), '\n'), 1) << file;
    EXPECT_EQ(compact.back(), '\n') << file;
    EXPECT_GT(std::count(pretty.begin(), pretty.end(), '\n'), 5) << file;
    EXPECT_EQ(json::parse(compact), json::parse(pretty)) << file;
  }
  EXPECT_EQ(JsonText(verify, false), verify.dump() + "\n");
  EXPECT_EQ(JsonText(verify, true), verify.dump(2) + "\n");
  std::filesystem::remove_all(dir);
}

TEST(JUnit, CountsAndEscapes) {
  Invocation invocation{"compare", {}, "", 0.5};
  const std::string xml = JUnitXml(FailingCompare(), invocation);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"sample 0 / bad&lt;&amp;&gt;\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("bad<&>"), std::string::npos);
}

TEST(Console, NamesTheFirstFailureAndHasNoColourUnlessAsked) {
  const std::string plain = ConsoleText(FailingCompare(), false);
  EXPECT_EQ(plain.find("\033["), std::string::npos);
  EXPECT_NE(plain.find("FAIL: 1 of 2 output checks passed; first failure: sample 0, output "
                       "'bad<&>'"),
            std::string::npos)
      << plain;
  EXPECT_NE(ConsoleText(FailingCompare(), true).find("\033[31m"), std::string::npos);
}

TEST(Table, AlignsColumns) {
  internal::Table table({"a", "long header"});
  table.AddRow({"wide cell", "x"});
  EXPECT_EQ(table.Render(false), "a          long header\nwide cell  x\n");
}

}  // namespace
}  // namespace convgate::report
