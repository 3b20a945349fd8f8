// junit.xml for CI systems: one <testcase> per output per sample, named so a CI page reads
// "sample 0 / logits"; the failure text is the same sentence the console prints.
#include <filesystem>
#include <sstream>

#include "convgate/core/utf8.h"
#include "convgate/report/report.h"
#include "report/agreement_report.h"
#include "report/per_node_report.h"
#include "report/text/markup.h"

namespace convgate::report {
namespace {

struct Case {
  std::string classname;
  std::string name;
  std::vector<std::string> failures;
  bool error = false;
  std::string system_out = {};  // figures a reader wants beside the case (a benchmark's)
};

struct Suite {
  std::string name;
  std::vector<Case> cases;
  // <property name=... value=...> of the suite: the full paths, which a classname cannot hold.
  std::vector<std::pair<std::string, std::string>> properties;
};

// A CI page splits a classname at its dots into packages, so a path (tinycnn.onnx,
// /a/b.c/model.onnx) would become nested packages: the classname takes the file's stem with its
// dots made underscores ("convgate.compare.model_fp16"), and the path goes in a property.
std::string ClassName(const std::string& workflow, const std::string& path) {
  std::filesystem::path file = std::filesystem::path(path).lexically_normal();
  if (!file.has_filename()) file = file.parent_path();  // "case_dir/"
  std::string stem = file.stem().string();
  for (char& c : stem) {
    if (c == '.') c = '_';
  }
  return "convgate." + workflow + "." + (stem.empty() ? "unnamed" : stem);
}

std::string RenderSuite(const Suite& suite, double seconds) {
  size_t failures = 0, errors = 0;
  for (const Case& c : suite.cases) {
    if (c.error) {
      ++errors;
    } else if (!c.failures.empty()) {
      ++failures;
    }
  }
  std::ostringstream xml;
  xml << "  <testsuite name=\"" << EscapeMarkup(suite.name) << "\" tests=\"" << suite.cases.size()
      << "\" failures=\"" << failures << "\" errors=\"" << errors << "\" time=\"" << seconds
      << "\">\n";
  if (!suite.properties.empty()) {
    xml << "    <properties>\n";
    for (const auto& [name, value] : suite.properties) {
      xml << "      <property name=\"" << EscapeMarkup(name) << "\" value=\"" << EscapeMarkup(value)
          << "\"/>\n";
    }
    xml << "    </properties>\n";
  }
  for (const Case& c : suite.cases) {
    xml << "    <testcase classname=\"" << EscapeMarkup(c.classname) << "\" name=\""
        << EscapeMarkup(c.name) << "\"";
    if (c.failures.empty() && c.system_out.empty()) {
      xml << "/>\n";
      continue;
    }
    xml << ">\n";
    if (!c.failures.empty()) {
      std::string body;
      for (const std::string& line : c.failures) body += line + "\n";
      const char* tag = c.error ? "error" : "failure";
      xml << "      <" << tag << " message=\"" << EscapeMarkup(c.failures.front()) << "\">"
          << EscapeMarkup(body) << "</" << tag << ">\n";
    }
    if (!c.system_out.empty()) {
      xml << "      <system-out>" << EscapeMarkup(c.system_out) << "</system-out>\n";
    }
    xml << "    </testcase>\n";
  }
  xml << "  </testsuite>\n";
  return xml.str();
}

std::string Render(const std::vector<Suite>& suites, double seconds) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  for (const Suite& suite : suites) xml += RenderSuite(suite, seconds);
  return xml + "</testsuites>\n";
}

Case ErrorCase(const std::string& classname, const gate::GateError& error) {
  return Case{classname, std::string(gate::StageName(error.stage)), {ErrorLine(error)}, true};
}

Suite RunSuite(const gate::RunReport& report) {
  const std::string classname = ClassName("run", report.model.path);
  Suite suite{"convgate run", {}, {{"model", report.model.path}}};
  if (!report.structure_failures.empty()) {
    suite.cases.push_back({classname, "structure", report.structure_failures, false});
  }
  for (const gate::SanityCheck& check : report.checks) {
    suite.cases.push_back({classname,
                           "sample " + std::to_string(check.sample) + " / " + check.output,
                           check.failures, false});
  }
  if (report.error) suite.cases.push_back(ErrorCase(classname, *report.error));
  return suite;
}

// One case per side (its figures as system-out) and, when a speed gate was set, one for it.
void AddBenchmarkCases(const bench::BenchmarkRecord& record, const std::string& classname,
                       Suite& suite) {
  for (const bench::SideBenchmark& side : record.sides) {
    suite.cases.push_back(Case{.classname = classname,
                               .name = "benchmark / " + side.role,
                               .failures = {},
                               .system_out = side.path + ": " + bench::DescribeSide(side)});
  }
  if (record.speed && record.speed->gate.any()) {
    suite.cases.push_back(
        Case{.classname = classname,
             .name = "benchmark / speed",
             .failures = record.speed->failures,
             .system_out = "the target is " + bench::DescribeSpeedup(*record.speed)});
  }
}

Suite CompareSuite(const gate::CompareReport& report) {
  const std::string classname = ClassName("compare", report.target.path);
  Suite suite{
      "convgate compare", {}, {{"source", report.source.path}, {"target", report.target.path}}};
  if (!report.structure_failures.empty()) {
    suite.cases.push_back({classname, "structure", report.structure_failures, false});
  }
  for (const gate::OutputCheck& check : report.checks) {
    std::vector<std::string> lines = check.failures;
    for (const std::string& hint : check.hints) lines.push_back("hint: " + hint);
    if (check.passed) lines.clear();
    suite.cases.push_back(
        {classname, "sample " + std::to_string(check.sample) + " / " + check.output, lines, false});
  }
  for (auto& [name, lines] : internal::AgreementCases(report)) {
    suite.cases.push_back({classname, name, lines, false});
  }
  // Intermediate tensors are test cases only when they gate (--strict); otherwise their failures
  // are evidence in report.json, and a CI dashboard would show a passed gate as failed tests.
  if (report.per_node && report.per_node->strict) {
    for (auto& [name, lines] : internal::PerNodeCases(report)) {
      suite.cases.push_back({classname, name, lines, false});
    }
  }
  if (report.benchmark) AddBenchmarkCases(*report.benchmark, classname, suite);
  if (report.error) suite.cases.push_back(ErrorCase(classname, *report.error));
  return suite;
}

Suite BenchSuite(const gate::BenchReport& report) {
  const std::string& model = report.target ? report.target->path : report.source.path;
  const std::string classname = ClassName("bench", model);
  Suite suite{"convgate bench", {}, {{report.source.role, report.source.path}}};
  if (report.target) suite.properties.emplace_back("target", report.target->path);
  AddBenchmarkCases(report.benchmark, classname, suite);
  if (report.error) suite.cases.push_back(ErrorCase(classname, *report.error));
  return suite;
}

}  // namespace

std::string JUnitXml(const gate::RunReport& report, const Invocation& invocation) {
  return Render({RunSuite(report)}, invocation.seconds);
}

std::string JUnitXml(const gate::CompareReport& report, const Invocation& invocation) {
  return Render({CompareSuite(report)}, invocation.seconds);
}

std::string JUnitXml(const gate::BenchReport& report, const Invocation& invocation) {
  return Render({BenchSuite(report)}, invocation.seconds);
}

// verify: the conversion, the target's end-to-end run and the comparison, one suite each.
std::string JUnitXml(const gate::VerifyReport& report, const Invocation& invocation) {
  const std::string classname = ClassName("verify", report.source);
  Suite conversion{"convgate verify: conversion", {}, {{"source", report.source}}};
  if (!report.target.empty()) conversion.properties.emplace_back("target", report.target);
  std::vector<std::string> failure;
  if (!report.conversion_passed && report.error) failure.push_back(ErrorLine(*report.error));
  conversion.cases.push_back(
      {classname,
       report.conversion_detail.empty() ? report.conversion_path : report.conversion_detail,
       failure, !failure.empty()});
  std::vector<Suite> suites = {conversion};
  if (report.e2e) suites.push_back(RunSuite(*report.e2e));
  if (report.comparison) suites.push_back(CompareSuite(*report.comparison));
  return Render(suites, invocation.seconds);
}

}  // namespace convgate::report
