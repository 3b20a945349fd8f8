// The HTML page and the Markdown summary drawn from report.json documents: what they show, that
// names are escaped, that any shape of document renders without throwing, and the Markdown's bound.
#include "convgate/report/html.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

namespace convgate::report {
namespace {

using nlohmann::json;

// A failing comparison with a per-node run, shaped as compare writes report.json.
json FailingReport(int outputs) {
  json report = {{"command", "compare"},
                 {"verdict", "fail"},
                 {"source", {{"path", "a.onnx"}, {"backend", "ort"}}},
                 {"target", {{"path", "b.onnx"}, {"backend", "ort"}}},
                 {"policy", {{"atol", 1e-5}, {"rtol", 1e-3}, {"check_error_stat", "elementwise"}}},
                 {"summary", {{"checks", outputs}, {"passed", 0}}}};
  for (int i = 0; i < outputs; ++i) {
    report["results"].push_back(
        {{"output", "out<" + std::to_string(i) + ">"},
         {"sample", 0},
         {"verdict", "fail"},
         {"policy", {{"atol", 0.01}}},
         {"failures", {"10 of 10 elements outside"}},
         {"stats",
          {{"mismatches", 10},
           {"num_elements", 10},
           {"atol_to_pass", 0.01},
           {"rtol_to_pass", 0.07},
           {"errors",
            {{"max_abs_error", 0.015},
             {"abs_error_percentiles", {{"p50", 0.0066}, {"p90", 0.012}, {"p99", 0.0149}}}}}}}});
  }
  report["per_node"] = {
      {"summary", {{"matched", 2}, {"passed", 1}, {"failed", 1}, {"errored", 0}}},
      {"culprit", {{"node", "Gemm_<b>"}, {"op_type", "Gemm"}, {"added_max_abs_error", 0.015}}},
      {"first_divergent", {{"node", "Gemm_<b>"}}},
      {"nodes",
       {{{"node", "Conv_a"}, {"op_type", "Conv"}, {"status", "passed"}, {"max_abs_error", 0.0}},
        {{"node", "Gemm_<b>"},
         {"op_type", "Gemm"},
         {"status", "failed"},
         {"max_abs_error", 0.015},
         {"samples", {{{"p99_abs_error", 0.0149}, {"atol", 1e-5}}}}}}}};
  return report;
}

TEST(HtmlReportTest, ShowsTheVerdictChartsAndMarksWithNamesEscaped) {
  const std::string page = RenderHtml({FailingReport(2)});
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("class=\"verdict fail\""), std::string::npos);
  EXPECT_NE(page.find("<svg class=\"chart line-chart"), std::string::npos);
  EXPECT_NE(page.find("class=\"mark culprit\""), std::string::npos);
  EXPECT_NE(page.find("culprit: Gemm_&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(page.find("Gemm_<b>"), std::string::npos) << "a node name reached the page unescaped";
  EXPECT_EQ(page.find("out<0>"), std::string::npos);
  EXPECT_NE(page.find("class=\"bar marked\""), std::string::npos) << "the atol's decade";
  // No reference to anything outside the page.
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
}

// Exporters leave Constants unnamed: several records share the name "", so a mark is placed by
// the record's run-order index and labelled by what the node is and produces.
TEST(HtmlReportTest, UnnamedNodesAreMarkedByIndexAndLabelledByTheirTensor) {
  json report = FailingReport(1);
  report["per_node"]["nodes"] = {
      {{"node", ""}, {"index", 0}, {"op_type", "Constant"}, {"tensor", "w0"}},
      {{"node", ""}, {"index", 1}, {"op_type", "Constant"}, {"tensor", "w1"}, {"status", "failed"}},
      {{"node", ""}, {"index", 2}, {"op_type", "Constant"}, {"tensor", "w2"}}};
  report["per_node"]["culprit"] = {
      {"node", ""}, {"index", 1}, {"op_type", "Constant"}, {"tensor", "w1"}};
  report["per_node"].erase("first_divergent");
  const std::string page = RenderHtml({report});
  EXPECT_NE(page.find("culprit: unnamed Constant -&gt; w1"), std::string::npos);
  // Three items over the 680 px plot: the middle one is at x = 64 + 340.
  EXPECT_NE(page.find("<g class=\"mark culprit\"><line class=\"mark-line\" x1=\"404.0\""),
            std::string::npos)
      << page.substr(page.find("mark culprit") - 20, 200);
  EXPECT_NE(RenderMarkdown({report}).find("**Culprit:** `unnamed Constant -> w1` (Constant)"),
            std::string::npos);
}

TEST(HtmlReportTest, AnyDocumentRendersWithoutThrowing) {
  for (
      const char* text :
      {"{}", R"({"results": null})", R"({"results": [1, "x", null]})",
       R"({"per_node": {"nodes": 5}})", R"({"per_node": {"nodes": [1, {"samples": 3}]}})",
       R"({"comparison": [], "command": 7})", R"({"jobs": 3, "manifest": null})",
       R"({"jobs": [1, {"verdict": 2}], "manifest": "m"})",
       R"({"results": [{"stats": {"errors": {"abs_error_percentiles": {"p": "x", "p50": -1}}}}]})"}) {
    const json document = json::parse(text);
    EXPECT_NO_THROW(RenderHtml({document})) << text;
    EXPECT_NO_THROW(RenderMarkdown({document})) << text;
  }
}

TEST(MarkdownReportTest, OneModelStaysUnderSixtyLines) {
  const std::string markdown = RenderMarkdown({FailingReport(200)});
  const size_t lines = static_cast<size_t>(std::count(markdown.begin(), markdown.end(), '\n'));
  EXPECT_LT(lines, 60u) << markdown;
  EXPECT_NE(markdown.find("### convgate compare: ❌ FAIL"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("and 190 more failing outputs"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("**Culprit:** `Gemm_<b>` (Gemm)"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| out&lt;0&gt; | 0 | 0.015 | 10 of 10 | 0.01 | 0.07 |"),
            std::string::npos)
      << markdown;
}

}  // namespace
}  // namespace convgate::report
