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

#include "convgate/core/utf8.h"
#include "convgate/inspect/inspect.h"
#include "convgate/report/json_text.h"
#include "report/json/codec.h"
#include "report/per_node_report.h"
#include "report/text/table.h"

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

// Found by fuzz/onnx_model_fuzz.cc (fuzz/regressions/onnx_model/producer_name_not_utf8.onnx):
// protobuf does not check that a model's strings are UTF-8, and dump() threw on them, so
// `inspect --json` and every report.json of such a model failed.
TEST(DumpJson, AModelsBytesThatAreNotUtf8AreWrittenEscaped) {
  graph::ModelSummary summary;
  summary.producer_name = "exporter\xaf";
  TensorInfo output;
  output.name = "y\xc3";
  summary.signature.outputs.push_back(output);
  const json document = inspect::ModelSummaryJson(summary);
  ASSERT_THROW(document.dump(), json::type_error);
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(document));
  EXPECT_NE(text.find(R"(exporter\\xaf)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(y\\xc3)"), std::string::npos) << text;
  EXPECT_NO_THROW(json::parse(text));
}

TEST(JUnit, CountsAndEscapes) {
  Invocation invocation{"compare", {}, "", 0.5};
  const std::string xml = JUnitXml(FailingCompare(), invocation);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"sample 0 / bad&lt;&amp;&gt;\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("bad<&>"), std::string::npos);
}

// Issue 10: junit.xml says it is UTF-8 and XML 1.0 cannot hold most controls even as references:
// both are spelled \xNN, so any output name or runner message still makes a document CI can parse.
TEST(JUnit, BytesAndControlsThatXmlCannotHoldAreSpelledOut) {
  Invocation invocation{"compare", {}, "", 0.5};
  gate::CompareReport report = FailingCompare();
  report.checks[1].output = "y\xff\x1b[2J\r\x01";
  report.target.path = "b\xfe.onnx";
  const std::string xml = JUnitXml(report, invocation);
  EXPECT_EQ(FindInvalidUtf8(xml), std::nullopt);
  for (char c : xml) {
    EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << static_cast<int>(c);
  }
  EXPECT_NE(xml.find("name=\"sample 0 / y\\xff\\x1b[2J\\x0d\\x01\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("value=\"b\\xfe.onnx\""), std::string::npos) << xml;
}

// Issue 9: the classname was "convgate.compare./path/to/b.onnx", which a CI page splits at every
// dot into packages.
TEST(JUnit, ClassnamesTakeTheFileNameAndPathsGoInProperties) {
  Invocation invocation{"compare", {}, "", 0.5};
  gate::CompareReport report = FailingCompare();
  report.source.path = "/models/v1.2/model.onnx";
  report.target.path = "/models/v1.2/model.fp16.onnx";
  const std::string xml = JUnitXml(report, invocation);
  EXPECT_NE(xml.find("classname=\"convgate.compare.model_fp16\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("classname=\"convgate.compare./"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<properties>\n      <property name=\"source\" "
                     "value=\"/models/v1.2/model.onnx\"/>\n      <property name=\"target\" "
                     "value=\"/models/v1.2/model.fp16.onnx\"/>\n    </properties>"),
            std::string::npos)
      << xml;
  gate::RunReport run;
  run.model = Side("model", "out/case_dir/");
  run.verdict = gate::Verdict::kPass;
  const std::string run_xml = JUnitXml(run, invocation);
  EXPECT_NE(run_xml.find("<property name=\"model\" value=\"out/case_dir/\"/>"), std::string::npos)
      << run_xml;
}

// Issue 9: a run or comparison that checked nothing fails, and every file says why.
TEST(Rendering, NothingCheckedIsAFailureWithItsReason) {
  gate::RunReport run;
  run.model = Side("model", "m.onnx");
  run.structure_failures = {"nothing was checked: the model declares no outputs and returned none"};
  run.verdict = gate::Verdict::kFail;
  EXPECT_EQ(VerifyResultJson(run)["error"], run.structure_failures[0]);
  EXPECT_NE(ConsoleText(run, false).find("FAIL: no output checked"), std::string::npos)
      << ConsoleText(run, false);
  Invocation invocation{"run", {}, "", 0.5};
  EXPECT_EQ(ReportJson(run, invocation)["summary"]["structure_failures"], 1);
  EXPECT_NE(JUnitXml(run, invocation).find("name=\"structure\""), std::string::npos);

  gate::CompareReport compare;
  compare.source = Side("source", "a.npz");
  compare.target = Side("target", "b.npz");
  compare.structure_failures = {"nothing was compared: neither the source nor the target"};
  compare.verdict = gate::Verdict::kFail;
  const std::string console = ConsoleText(compare, false);
  EXPECT_NE(console.find("FAIL: no output compared; 1 structure failure(s)"), std::string::npos)
      << console;
  EXPECT_EQ(VerifyResultJson(compare)["error"], compare.structure_failures[0]);
}

// Issue 9: a node introducing NaN printed "max |diff| 0" on the first-divergent and culprit lines
// (the finite pairs agree; the NaN elements are not in that statistic).
TEST(PerNode, NaNIsNamedRatherThanShownAsAZeroDifference) {
  gate::NodeSampleResult nan;
  nan.elements = 2048;
  nan.mismatches = 256;
  nan.introduced_nan = nan.introduced_non_finite = 256;
  nan.failures = {"introduced NaN: 256 of 2048 elements (12.5%) are NaN in the target"};
  EXPECT_EQ(internal::NodeErrorText(nan), "NaN introduced (256 of 2048 elements)");
  gate::NodeSampleResult mixed = nan;
  mixed.introduced_inf = 2;
  mixed.introduced_non_finite = 258;
  mixed.max_abs_error = 0.5;
  EXPECT_EQ(internal::NodeErrorText(mixed),
            "NaN and Inf introduced (258 of 2048 elements), max |diff| 0.5 elsewhere");
  gate::NodeSampleResult finite;
  finite.max_abs_error = 0.25;
  EXPECT_EQ(internal::NodeErrorText(finite), "max |diff| 0.25");

  gate::CompareReport report = FailingCompare();
  gate::PerNodeReport per_node;
  per_node.local_error_mode = "failed";
  gate::NodeCheck node;
  node.node = node.tensor = "bn";
  node.op_type = "BatchNormalization";
  node.status = gate::NodeStatus::kFailed;
  node.samples = {nan};
  node.local = gate::LocalError{};
  node.local->computed = true;
  node.local->inputs_from_source = {"conv"};
  node.local->result = nan;
  per_node.nodes = {node};
  per_node.first_divergent = per_node.culprit = 0;
  per_node.by_added_error = {0};
  per_node.non_finite.introduced = 0;
  per_node.non_finite.introduced_sample = 0;
  report.per_node = per_node;
  const std::string console = ConsoleText(report, false);
  EXPECT_NE(console.find("first divergent: node 'bn' (BatchNormalization) -> 'bn', sample 0: NaN "
                         "introduced (256 of 2048 elements), source ["),
            std::string::npos)
      << console;
  EXPECT_NE(console.find("culprit: node 'bn' (BatchNormalization) -> 'bn' introduces NaN by itself "
                         "(256 of 2048 elements), run alone on the source's 'conv'"),
            std::string::npos)
      << console;
  EXPECT_NE(console.find("NaN 256/2048"), std::string::npos) << console;
  EXPECT_EQ(console.find("max |diff| 0,"), std::string::npos) << console;
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
