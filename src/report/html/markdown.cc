// The Markdown summary for CI systems (a GitHub step summary, a GitLab merge request note): the
// verdict, the failing outputs in one compact table, the culprit and the tolerances that would
// pass. Bounded: at most kMaxRows rows per table, so one model stays under 60 lines.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/report/html.h"
#include "report/html/json_get.h"
#include "report/html/store_series.h"
#include "report/html/svg.h"

namespace convgate::report {
namespace {

using html::Get;
using html::Number;
using html::Short;
using html::Text;
using nlohmann::json;

constexpr size_t kMaxRows = 10;

double MaxAbs(const json& result) {
  return Number(Get(Get(result, "stats"), "errors"), "max_abs_error");
}

// Table cells: a '|' or a line break would end the cell.
std::string Cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<') {
      out += "&lt;";  // a name never becomes markup in a merge request note
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string Icon(const std::string& verdict) {
  return verdict == "pass" ? "✅ PASS" : verdict == "fail" ? "❌ FAIL" : "⚠️ ERROR";
}

std::string Batch(const json& summary) {
  const double exit_code =
      Get(summary, "exit_code").is_number() ? Get(summary, "exit_code").get<double>() : 3;
  std::string out = "### convgate batch: " +
                    Icon(exit_code == 0   ? "pass"
                         : exit_code == 1 ? "fail"
                                          : "error") +
                    "\n\n" + Text(summary, "entries") + " entries: " + Text(summary, "passed") +
                    " passed, " + Text(summary, "failed") + " failed, " + Text(summary, "errors") +
                    " errors\n\n";
  std::vector<const json*> bad;
  for (const json& job : Get(summary, "jobs")) {
    if (Text(job, "verdict") != "pass") bad.push_back(&job);
  }
  if (bad.empty()) return out;
  out += "| entry | conversion | verdict | error |\n|---|---|---|---|\n";
  for (size_t i = 0; i < bad.size() && i < kMaxRows; ++i) {
    out += "| " + Cell(Text(*bad[i], "id")) + " | " + Cell(Text(*bad[i], "conversion")) + " | " +
           Text(*bad[i], "verdict") + " | " + Cell(Text(*bad[i], "error").substr(0, 120)) + " |\n";
  }
  if (bad.size() > kMaxRows) {
    out += "\n… and " + std::to_string(bad.size() - kMaxRows) + " more not passing\n";
  }
  return out;
}

std::string Gate(const json& report) {
  const json& comparison = report.contains("results") ? report : Get(report, "comparison");
  std::string out =
      "### convgate " + Text(report, "command") + ": " + Icon(Text(report, "verdict")) + "\n\n";
  const json& source =
      Get(comparison, "source").is_null() ? Get(report, "source") : Get(comparison, "source");
  const json& target =
      Get(comparison, "target").is_null() ? Get(report, "target") : Get(comparison, "target");
  out += "- source: `" + Text(source, "path") + "`\n- target: `" + Text(target, "path") + "`\n";
  if (!Text(report, "conversion_detail").empty()) {
    out += "- conversion: " + Text(report, "conversion_detail") + "\n";
  }
  const json& summary = Get(comparison, "summary");
  if (summary.is_object() && summary.contains("checks")) {
    out += "- checks: " + Text(summary, "passed") + " of " + Text(summary, "checks") + " passed\n";
  }
  if (Get(report, "error").is_object()) {
    out += "- error (" + Text(Get(report, "error"), "stage") +
           "): " + Cell(Text(Get(report, "error"), "message")) + "\n";
  }
  // Failing outputs, worst sample of each.
  std::map<std::string, const json*> failing;
  for (const json& result : Get(comparison, "results")) {
    if (Text(result, "verdict") != "fail") continue;
    const std::string name = Text(result, "output");
    auto it = failing.find(name);
    if (it == failing.end() || MaxAbs(result) > MaxAbs(*it->second)) {
      failing[name] = &result;
    }
  }
  if (!failing.empty()) {
    out +=
        "\n| output | sample | max abs diff | mismatches | atol to pass | rtol to pass |\n"
        "|---|---|---|---|---|---|\n";
    size_t rows = 0;
    for (const auto& [name, result] : failing) {
      if (rows++ == kMaxRows) break;
      const json& stats = Get(*result, "stats");
      out += "| " + Cell(name) + " | " + Text(*result, "sample") + " | " + Short(MaxAbs(*result)) +
             " | " + Text(stats, "mismatches") + " of " + Text(stats, "num_elements") + " | " +
             Short(Number(stats, "atol_to_pass")) + " | " + Short(Number(stats, "rtol_to_pass")) +
             " |\n";
    }
    if (failing.size() > kMaxRows) {
      out += "\n… and " + std::to_string(failing.size() - kMaxRows) + " more failing outputs\n";
    }
  }
  const json& per_node = Get(comparison, "per_node");
  if (Get(per_node, "culprit").is_object()) {
    const json& culprit = Get(per_node, "culprit");
    out += "\n**Culprit:** `" + html::NodeLabel(culprit) + "` (" + Text(culprit, "op_type") +
           "), adding max abs diff " + Short(Number(culprit, "added_max_abs_error")) + "\n";
  }
  // The hints: the smallest tolerances that would pass, how widespread the misses are.
  std::string hints;
  size_t count = 0;
  for (const json& aggregate : Get(comparison, "aggregates")) {
    for (const json& hint : Get(aggregate, "hints")) {
      if (hint.is_string() && count++ < 6) hints += "- " + Cell(hint.get<std::string>()) + "\n";
    }
  }
  if (!hints.empty()) out += "\n" + hints;
  return out;
}

// A results store: how many models x conversions, and those whose latest job regressed.
std::string Store(const json& document) {
  std::vector<std::string> conversions;
  const auto series = html::GroupSeries(Get(document, "history"), conversions);
  std::vector<std::pair<const html::StoreSeries*, std::string>> regressed;
  for (const auto& [key, one] : series) {
    if (std::string why = html::RegressionOf(one); !why.empty()) regressed.push_back({&one, why});
  }
  std::string out =
      "### convgate results store: " +
      std::string(regressed.empty() ? "✅ no regression"
                                    : "❌ " + std::to_string(regressed.size()) + " regressed") +
      "\n\n" + std::to_string(series.size()) +
      (series.size() == 1 ? " model and conversion in " : " models and conversions in ") +
      Cell(Text(document, "store")) +
      (Text(document, "since").empty() ? "" : " since " + Text(document, "since")) + "\n";
  if (regressed.empty()) return out;
  out += "\n| model | conversion | latest | regression |\n|---|---|---|---|\n";
  for (size_t i = 0; i < regressed.size() && i < kMaxRows; ++i) {
    const html::StoreSeries& one = *regressed[i].first;
    out += "| " + Cell(one.entry) + " | " + Cell(one.conversion) + " | " +
           Text(*one.jobs.back(), "verdict") + " | " + Cell(regressed[i].second) + " |\n";
  }
  if (regressed.size() > kMaxRows) {
    out += "\n… and " + std::to_string(regressed.size() - kMaxRows) + " more regressed\n";
  }
  return out;
}

}  // namespace

std::string RenderMarkdown(const std::vector<nlohmann::json>& reports) {
  std::string out;
  for (const json& report : reports) {
    if (!out.empty()) out += "\n";
    out += report.contains("history") && report.contains("store")   ? Store(report)
           : report.contains("jobs") && report.contains("manifest") ? Batch(report)
                                                                    : Gate(report);
  }
  return out;
}

}  // namespace convgate::report
