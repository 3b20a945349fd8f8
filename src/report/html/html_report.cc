// The HTML report: report.json (or a batch's summary.json) as one self-contained page. Verdicts and
// tables are plain HTML and the charts inline SVG (report/html/svg.h), so the page reads the same
// without JavaScript and without a network; one small inline script only makes tables sortable.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "convgate/report/html.h"
#include "report/html/json_get.h"
#include "report/html/store_series.h"
#include "report/html/svg.h"

namespace convgate::report {
namespace {

using html::Escape;
using html::Get;
using html::Number;
using html::Short;
using html::Text;
using nlohmann::json;

constexpr char kStyle[] = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;color:#1b1f24;padding:0 16px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:700;color:#fff}
.verdict.pass{background:#1a7f37}.verdict.fail{background:#cf222e}.verdict.error{background:#9a6700}
table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;cursor:pointer} tr.fail td{background:#ffebe9} tr.error td{background:#fff8c5}
td.num{text-align:right} dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:8px 0}
dt{color:#57606a} dd{margin:0;word-break:break-all} ul.failures li{color:#cf222e} ul.hints li{color:#57606a}
svg.chart{display:block;margin:8px 0;max-width:100%;height:auto;background:#fff;border:1px solid #eaeef2}
.chart-title{font-weight:600;font-size:13px}.tick,.axis-label,.legend-label,.mark-label,.threshold-label{font-size:11px;fill:#57606a}
.grid{stroke:#eaeef2}.axis{stroke:#57606a}.threshold{stroke:#cf222e;stroke-dasharray:5 4}
.series{fill:none;stroke-width:1.5}.series.max,.dot.max,.legend.max{stroke:#0969da;fill:#0969da}
.series.p99,.dot.p99,.legend.p99{stroke:#8250df;fill:#8250df}.series{fill:none!important}
.mark-line{stroke:#9a6700;stroke-width:1.5}.culprit .mark-line{stroke:#cf222e}.nan-origin .mark-line{stroke:#000;stroke-dasharray:2 2}
.bar{fill:#0969da}.bar.marked{fill:#cf222e}.cell.diagonal{stroke:#0969da}
.note{color:#57606a} .small{font-size:12px}
table.steps td.step{padding:0 3px;text-align:center;font-size:11px;min-width:12px}
td.step.pass{background:#dafbe1;color:#1a7f37} td.step.fail{background:#ffebe9;color:#cf222e}
span.run{display:inline-block;width:8px;height:14px;margin-right:1px;background:#d0d7de}
span.run.pass{background:#1a7f37} span.run.fail{background:#cf222e} span.run.error{background:#9a6700}
svg.sparkline{display:block} .spark{fill:none;stroke:#0969da;stroke-width:1.5} .spark-last{fill:#0969da}
b.regression{color:#cf222e;font-size:12px} td.regressed{outline:2px solid #cf222e}
)";

// Rows sort on a header click (numbers as numbers); without JavaScript they stay in report order.
constexpr char kScript[] = R"(
document.querySelectorAll('table.sortable th').forEach(function(th,col){th.addEventListener('click',function(){
var body=th.closest('table').tBodies[0];var rows=Array.from(body.rows);var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
rows.sort(function(a,b){var x=a.cells[col].dataset.v||a.cells[col].textContent,y=b.cells[col].dataset.v||b.cells[col].textContent;
var nx=parseFloat(x),ny=parseFloat(y);var r=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?r:-r;});
rows.forEach(function(r){body.appendChild(r);});});});
)";

// `key` of `first`, else of `second`.
const json& First(const json& first, const char* key, const json& second) {
  const json& found = Get(first, key);
  return found.is_null() ? Get(second, key) : found;
}

double MaxAbs(const json& result) {
  return Number(Get(Get(result, "stats"), "errors"), "max_abs_error");
}

std::string Cell(const std::string& text) { return "<td>" + Escape(text) + "</td>"; }

std::string NumCell(double value) {
  return "<td class=\"num\" data-v=\"" + Short(value) + "\">" + Escape(Short(value)) + "</td>";
}

std::string VerdictBadge(const std::string& verdict) {
  const std::string shown = verdict.empty() ? "error" : verdict;
  std::string upper = shown;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  return "<span class=\"verdict " + Escape(shown) + "\">" + Escape(upper) + "</span>";
}

// The comparison a report holds: its own (compare, check), verify's, or a pipeline's outputs'.
const json& ComparisonOf(const json& report) {
  static const json kNone = json::object();
  if (report.contains("results")) return report;
  for (const char* key : {"comparison", "outputs_compared"}) {
    auto it = report.find(key);
    if (it != report.end() && it->is_object()) return *it;
  }
  return kNone;
}

std::string SideLine(const json& side) {
  if (!side.is_object()) return "";
  std::string text = Text(side, "path");
  const std::string backend = Text(side, "backend");
  if (!backend.empty()) {
    text += " (" + backend + " " + Text(side, "backend_version") + ", " +
            Text(side, "backend_settings") + ")";
  }
  return text;
}

std::string Header(const json& report, const json& comparison) {
  std::string out = "<h1>convgate " + Escape(Text(report, "command")) + " " +
                    VerdictBadge(Text(report, "verdict")) + "</h1><dl>";
  const auto row = [&](const std::string& name, const std::string& value) {
    if (!value.empty()) out += "<dt>" + Escape(name) + "</dt><dd>" + Escape(value) + "</dd>";
  };
  const json& summary = Get(comparison, "summary");
  if (summary.is_object() && summary.contains("checks")) {
    row("checks",
        Text(summary, "passed") + " of " + Text(summary, "checks") + " output checks passed");
  }
  row("source", SideLine(First(comparison, "source", report)));
  row("target", SideLine(First(comparison, "target", report)));
  row("conversion", Text(report, "conversion_detail"));
  if (!Text(report, "spec").empty()) {
    row("pipeline", Text(report, "name") + " (" + Text(report, "spec") + "), " +
                        Text(report, "steps") + " steps");
  }
  if (Get(report, "task").is_object()) {
    row("task", Text(Get(report, "task"), "task") + ": " + Text(Get(report, "task"), "evidence"));
  }
  const json& inputs = Get(comparison, "inputs");
  row("inputs", Text(inputs, "origin"));
  const json& policy = Get(comparison, "policy");
  if (policy.is_object() && policy.contains("atol")) {
    row("policy", "atol " + Short(Number(policy, "atol")) + ", rtol " +
                      Short(Number(policy, "rtol")) + ", " + Text(policy, "check_error_stat"));
  }
  if (Get(report, "model_origins").is_array()) {
    for (const json& origin : Get(report, "model_origins")) {
      row("model origin", Text(origin, "uri") + " (" + Text(origin, "how") + ", commit " +
                              Text(origin, "commit") + ")");
    }
  }
  row("started", Text(report, "started_at"));
  if (Get(report, "error").is_object()) {
    row("error",
        Text(Get(report, "error"), "stage") + ": " + Text(Get(report, "error"), "message"));
  }
  return out + "</dl>";
}

// An error distribution from an output's percentiles of |diff| (p50 ... p99.5, the max): the
// share at or below the smallest, then the fraction of elements per decade read off the
// piecewise-linear (in log10) distribution those points give. Estimated, and said so in the
// chart's title; bins are labelled by their edges.
html::BarChart ErrorHistogram(const std::string& output, const json& stats, double atol) {
  html::BarChart chart;
  chart.title = output + ": |source - target| per decade (estimated from the error percentiles)";
  chart.x_label = "|diff|";
  const json& errors = Get(stats, "errors");
  std::vector<std::pair<double, double>> cdf;  // (log10 |diff|, fraction at or below)
  const json& percentiles = Get(errors, "abs_error_percentiles");
  for (const auto& [name, value] : percentiles.items()) {
    if (!value.is_number() || name.size() < 2) continue;
    const double fraction = std::atof(name.c_str() + 1) / 100.0;
    if (value.get<double>() > 0) cdf.push_back({std::log10(value.get<double>()), fraction});
  }
  const double max = Number(errors, "max_abs_error");
  if (max > 0) cdf.push_back({std::log10(max), 1.0});
  std::sort(cdf.begin(), cdf.end());
  if (cdf.empty()) return chart;
  // What lies at or below the smallest percentile (exact agreement included) is one bin: where
  // in it is not known.
  chart.bin_labels.push_back("<=" + Short(std::pow(10.0, cdf.front().first)));
  chart.fractions.push_back(cdf.front().second);
  const int low = static_cast<int>(std::floor(cdf.front().first));
  const int high = static_cast<int>(std::ceil(cdf.back().first + 1e-9));
  const auto fraction_at = [&](double log_value) {
    if (log_value <= cdf.front().first) return cdf.front().second;
    for (size_t i = 1; i < cdf.size(); ++i) {
      if (log_value <= cdf[i].first) {
        const double span = cdf[i].first - cdf[i - 1].first;
        const double t = span > 0 ? (log_value - cdf[i - 1].first) / span : 1;
        return cdf[i - 1].second + t * (cdf[i].second - cdf[i - 1].second);
      }
    }
    return 1.0;
  };
  for (int decade = low; decade < high; ++decade) {
    chart.bin_labels.push_back(
        Short(std::max(std::pow(10.0, decade), std::pow(10.0, cdf.front().first))) + "-" +
        Short(std::pow(10.0, decade + 1)));
    chart.fractions.push_back(std::max(0.0, fraction_at(decade + 1) - fraction_at(decade)));
    if (atol > 0 && std::log10(atol) >= decade && std::log10(atol) < decade + 1) {
      chart.marked_bin = static_cast<int>(chart.fractions.size()) - 1;
      chart.mark_label = "atol " + Short(atol);
    }
  }
  if (chart.marked_bin < 0 && atol > 0) {
    chart.note = "atol " + Short(atol) +
                 (std::log10(atol) < low ? ": below every bin (the whole distribution is above it)"
                                         : ": above every bin");
  }
  return chart;
}

std::string Outputs(const json& comparison) {
  const json& results = Get(comparison, "results");
  if (!results.is_array() || results.empty()) return "";
  std::string out =
      "<h2>Outputs</h2><table class=\"sortable outputs\"><thead><tr><th>output</th><th>sample</th>"
      "<th>verdict</th><th>max |diff|</th><th>max rel</th><th>mismatches</th><th>elements</th>"
      "<th>cosine</th><th>atol to pass</th><th>rtol to pass</th></tr></thead><tbody>";
  for (const json& result : results) {
    const json& stats = Get(result, "stats");
    const json& errors = Get(stats, "errors");
    const std::string verdict = Text(result, "verdict");
    out += "<tr class=\"" + Escape(verdict) + "\">" + Cell(Text(result, "output")) +
           NumCell(Number(result, "sample")) + Cell(verdict) +
           NumCell(Number(errors, "max_abs_error")) + NumCell(Number(errors, "max_rel_error")) +
           NumCell(Number(stats, "mismatches")) + NumCell(Number(stats, "num_elements")) +
           NumCell(Number(Get(stats, "metrics"), "cosine")) +
           NumCell(Number(stats, "atol_to_pass")) + NumCell(Number(stats, "rtol_to_pass")) +
           "</tr>";
  }
  out += "</tbody></table>";
  // Per output (its worst sample): the failures, the distribution, the worst element, hints.
  std::map<std::string, const json*> worst;
  for (const json& result : results) {
    const std::string name = Text(result, "output");
    auto it = worst.find(name);
    if (it == worst.end() || MaxAbs(result) > MaxAbs(*it->second)) {
      worst[name] = &result;
    }
  }
  for (const auto& [name, result] : worst) {
    const json& stats = Get(*result, "stats");
    out += "<section class=\"output\" data-output=\"" + Escape(name) + "\"><h3>" + Escape(name) +
           " " + VerdictBadge(Text(*result, "verdict")) + " <span class=\"small note\">sample " +
           Text(*result, "sample") + "</span></h3>";
    if (Get(*result, "failures").is_array()) {
      out += "<ul class=\"failures\">";
      for (const json& failure : Get(*result, "failures")) {
        out += "<li>" + Escape(failure.is_string() ? failure.get<std::string>() : "") + "</li>";
      }
      out += "</ul>";
    }
    const double atol = Number(Get(*result, "policy"), "atol");
    const html::BarChart histogram = ErrorHistogram(name, stats, atol);
    if (!histogram.fractions.empty()) out += html::BarChartSvg(histogram);
    // The worst elements: the one furthest outside its tolerance, and the largest |diff|.
    for (const auto& [key, label] : {std::pair{"worst_element", "furthest outside the tolerance"},
                                     std::pair{"max_abs_element", "largest |diff|"}}) {
      const json& element = Get(stats, key);
      if (!element.is_object() || !element.contains("source")) continue;
      const double diff = element.contains("abs_error")
                              ? Number(element, "abs_error")
                              : std::abs(Number(element, "source") - Number(element, "target"));
      out += "<p class=\"worst\">" + Escape(label) + ": element " + Escape(Text(element, "index")) +
             ", source " + Escape(Short(Number(element, "source"))) + ", target " +
             Escape(Short(Number(element, "target"))) + ", |diff| " + Escape(Short(diff)) +
             " (allowed " + Escape(Short(Number(element, "allowed"))) + ")</p>";
    }
    out += "</section>";
  }
  // Hints of the aggregates: what would pass, how widespread.
  const json& aggregates = Get(comparison, "aggregates");
  std::string hints;
  for (const json& aggregate : aggregates) {
    for (const json& hint : Get(aggregate, "hints")) {
      if (hint.is_string()) hints += "<li>" + Escape(hint.get<std::string>()) + "</li>";
    }
  }
  if (!hints.empty()) out += "<h3>Hints</h3><ul class=\"hints\">" + hints + "</ul>";
  return out;
}

std::string Agreements(const json& comparison) {
  const json& agreements = Get(comparison, "agreements");
  if (!agreements.is_array() || agreements.empty()) return "";
  std::string out = "<h2>Agreement</h2>";
  for (const json& record : agreements) {
    const std::string output = Text(record, "output");
    const json& top1 = Get(record, "top1");
    std::string line = "top-1 agreement " + Short(Number(top1, "rate") * 100) + "% (" +
                       Text(top1, "agree") + " of " + Text(record, "rows") + " rows)";
    for (const json& top_k : Get(record, "top_k")) {
      line += ", top-" + Text(top_k, "k") + " " + Short(Number(top_k, "rate") * 100) + "%";
    }
    line += ", flips " + Text(record, "flips");
    out += "<h3>" + Escape(output) + "</h3><p class=\"agreement\">" + Escape(line) + "</p>";
    const json& dense = Get(Get(record, "confusion"), "dense");
    const json& labels = Get(dense, "labels");
    const json& matrix = Get(dense, "matrix");
    if (labels.is_array() && matrix.is_array() && !labels.empty() && labels.size() <= 64) {
      html::Heatmap map;
      map.title = output + ": confusion of the top-1 labels (source x target)";
      map.row_label = "source";
      map.column_label = "target";
      for (const json& label : labels) map.labels.push_back(label.dump());
      for (const json& row : matrix) {
        std::vector<double> counts;
        for (const json& count : row) counts.push_back(count.is_number() ? count.get<double>() : 0);
        map.counts.push_back(std::move(counts));
      }
      out += html::HeatmapSvg(map);
    }
  }
  return out;
}

// Where along the network the error grew: max and p99 |diff| per node in run order, the
// tolerance, and the first divergence, the culprit and where a NaN first appeared marked.
std::string PerNode(const json& report, const json& comparison) {
  const json& per_node = First(comparison, "per_node", report);
  if (!per_node.is_object()) return "";
  const json& nodes = Get(per_node, "nodes");
  if (!nodes.is_array()) return "";
  html::LineChart chart;
  chart.title = "|source - target| per node, in run order (log scale)";
  chart.x_label = "node, in run order (exact agreement is drawn on the bottom line)";
  html::Series max{"max |diff|", "max", {}};
  html::Series p99{"p99 |diff|", "p99", {}};
  // A record's place on the curve by its run-order index (names repeat: unnamed nodes are "").
  std::map<int64_t, size_t> position;
  std::map<std::string, size_t> by_label;  // for a record without its index
  double atol = 0;
  for (const json& node : nodes) {
    double node_p99 = 0;
    for (const json& sample : Get(node, "samples")) {
      node_p99 = std::max(node_p99, Number(sample, "p99_abs_error"));
      if (atol == 0) atol = Number(sample, "atol");
    }
    position[static_cast<int64_t>(Number(node, "index", static_cast<double>(max.values.size())))] =
        max.values.size();
    by_label.emplace(html::NodeLabel(node), max.values.size());
    chart.item_names.push_back(html::NodeLabel(node) + " (" + Text(node, "op_type") + ")");
    max.values.push_back(Number(node, "max_abs_error"));
    p99.values.push_back(node_p99);
  }
  chart.series = {p99, max};  // max drawn last: on top where they meet
  chart.threshold = atol;
  chart.threshold_label = "atol " + Short(atol);
  const auto mark = [&](const json& node, const std::string& label, const std::string& css) {
    if (!node.is_object()) return;
    std::optional<size_t> item;
    if (auto it = position.find(static_cast<int64_t>(Number(node, "index", -1)));
        it != position.end()) {
      item = it->second;
    } else if (auto named = by_label.find(html::NodeLabel(node)); named != by_label.end()) {
      item = named->second;
    }
    if (item) {
      chart.marks.push_back(
          {static_cast<double>(*item), label + ": " + html::NodeLabel(node), css});
    }
  };
  mark(Get(per_node, "first_divergent"), "first divergence", "first-divergence");
  mark(Get(per_node, "culprit"), "culprit", "culprit");
  mark(Get(Get(per_node, "non_finite"), "introduced_at"), "NaN/inf origin", "nan-origin");
  std::string out = "<h2>Per node</h2>";
  const json& summary = Get(per_node, "summary");
  out += "<p>" + Escape(Text(summary, "matched")) +
         " nodes matched: " + Escape(Text(summary, "passed")) + " passed, " +
         Escape(Text(summary, "failed")) + " failed, " + Escape(Text(summary, "errored")) +
         " errored.";
  if (const json& culprit = Get(per_node, "culprit"); culprit.is_object()) {
    out += " Culprit: <b class=\"culprit-name\">" + Escape(html::NodeLabel(culprit)) + "</b> (" +
           Escape(Text(culprit, "op_type")) + "), adding |diff| " +
           Escape(Short(Number(culprit, "added_max_abs_error"))) + ".";
  }
  out += "</p>" + html::LineChartSvg(chart);
  out +=
      "<table class=\"sortable nodes\"><thead><tr><th>#</th><th>node</th><th>op</th><th>tensor</th>"
      "<th>status</th><th>max |diff|</th><th>added |diff|</th><th>p99 |diff|</th></tr></thead>"
      "<tbody>";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& node = nodes[i];
    const std::string status = Text(node, "status");
    out += "<tr class=\"" + Escape(status == "failed" ? "fail" : status) + "\">" +
           NumCell(static_cast<double>(i)) + Cell(html::NodeLabel(node)) +
           Cell(Text(node, "op_type")) + Cell(Text(node, "tensor")) + Cell(status) +
           NumCell(Number(node, "max_abs_error")) + NumCell(Number(node, "added_max_abs_error")) +
           NumCell(p99.values[i]) + "</tr>";
  }
  return out + "</tbody></table>";
}

std::string Benchmark(const json& report, const json& comparison) {
  const json& benchmark = First(report, "benchmark", comparison);
  if (!benchmark.is_object() || !benchmark.contains("sides")) return "";
  std::string out =
      "<h2>Speed</h2><table class=\"benchmark\"><thead><tr><th>side</th><th>backend</th>"
      "<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>inf/s</th><th>peak memory</th></tr>"
      "</thead><tbody>";
  for (const json& side : Get(benchmark, "sides")) {
    const json& latency = Get(side, "latency");
    out += "<tr>" + Cell(Text(side, "role")) + Cell(Text(side, "backend")) +
           NumCell(Number(latency, "p50_ms")) + NumCell(Number(latency, "p90_ms")) +
           NumCell(Number(latency, "p99_ms")) + NumCell(Number(side, "throughput")) +
           NumCell(Number(side, "peak_rss_bytes") / (1 << 20)) + "</tr>";
  }
  out += "</tbody></table>";
  const json& speed = Get(benchmark, "speed");
  if (speed.is_object()) out += "<p>" + Escape(Text(speed, "text")) + "</p>";
  return out;
}

// Which steps of a comparison failed: its results' samples are the pipeline's steps.
std::vector<std::string> StepVerdicts(const json& comparison, int64_t steps) {
  std::vector<std::string> verdicts(static_cast<size_t>(steps), "");
  for (const json& result : Get(comparison, "results")) {
    const double sample = Number(result, "sample", -1);
    if (sample < 0 || sample >= static_cast<double>(steps)) continue;
    std::string& cell = verdicts[static_cast<size_t>(sample)];
    const std::string verdict = Text(result, "verdict");
    if (verdict == "fail" || cell.empty()) cell = verdict;
  }
  return verdicts;
}

// A pipeline: a grid of its nodes (each target replayed on the source's inputs, and swapped into
// the pipeline) and its outputs by step, each cell the step's verdict.
std::string PipelineGrid(const json& report) {
  const int64_t steps = static_cast<int64_t>(Number(report, "steps"));
  if (steps <= 0) return "";
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  for (const json& node : Get(report, "nodes")) {
    for (const char* run : {"replay", "swapped"}) {
      if (Get(node, run).is_object()) {
        rows.push_back(
            {Text(node, "name") + " (" + run + ")", StepVerdicts(Get(node, run), steps)});
      }
    }
  }
  if (Get(report, "outputs_compared").is_object()) {
    rows.push_back({"pipeline outputs", StepVerdicts(Get(report, "outputs_compared"), steps)});
  }
  if (rows.empty()) return "";
  std::string out = "<h2>Nodes by step</h2><p class=\"note small\">" +
                    Escape(Text(report, "name")) + ": " + std::to_string(steps) +
                    " steps; replay: a node's target on the source's inputs of that step; "
                    "swapped: the target in the pipeline, its own state carried.</p>"
                    "<table class=\"steps\"><thead><tr><th>node</th>";
  for (int64_t step = 0; step < steps; ++step) out += "<th>" + std::to_string(step) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& [name, verdicts] : rows) {
    out += "<tr>" + Cell(name);
    for (size_t step = 0; step < verdicts.size(); ++step) {
      const std::string& verdict = verdicts[step];
      out += "<td class=\"step " + Escape(verdict) + "\" title=\"" + Escape(name) + ", step " +
             std::to_string(step) + ": " + Escape(verdict.empty() ? "not compared" : verdict) +
             "\">" +
             (verdict == "fail"   ? "&#x2717;"
              : verdict == "pass" ? "&#x2713;"
                                  : "") +
             "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::vector<double> Figures(const html::StoreSeries& series, const char* key) {
  std::vector<double> values;
  for (const json* job : series.jobs) {
    const json& value = Get(*job, key);
    values.push_back(value.is_number() &&
                             !(std::string(key) == "p50_ms" && value.get<double>() == 0)
                         ? value.get<double>()
                         : std::numeric_limits<double>::quiet_NaN());
  }
  return values;
}

// A results store's jobs: the latest verdict of each model and conversion (a grid), and each
// series' figures across runs with regressions marked.
std::string StoreHistory(const json& document) {
  std::vector<std::string> conversions;
  const std::map<std::pair<std::string, std::string>, html::StoreSeries> series =
      html::GroupSeries(Get(document, "history"), conversions);
  int regressions = 0;
  for (const auto& [key, one] : series) regressions += html::RegressionOf(one).empty() ? 0 : 1;
  std::string out =
      "<h1>convgate results store " + VerdictBadge(regressions > 0 ? "fail" : "pass") + "</h1><p>" +
      Escape(Text(document, "store")) +
      (Text(document, "since").empty() ? "" : ", jobs since " + Escape(Text(document, "since"))) +
      ": " + std::to_string(series.size()) +
      (series.size() == 1 ? " model and conversion, " : " models and conversions, ") +
      std::to_string(regressions) + " regressed</p>";
  out += "<h2>Latest verdicts</h2><table class=\"sortable grid store\"><thead><tr><th>model</th>";
  for (const std::string& conversion : conversions) out += "<th>" + Escape(conversion) + "</th>";
  out += "</tr></thead><tbody>";
  std::map<std::string, std::map<std::string, const html::StoreSeries*>> grid;
  for (const auto& [key, one] : series) grid[one.entry][one.conversion] = &one;
  for (const auto& [entry, row] : grid) {
    out += "<tr>" + Cell(entry);
    for (const std::string& conversion : conversions) {
      auto it = row.find(conversion);
      if (it == row.end()) {
        out += "<td></td>";
        continue;
      }
      const std::string verdict = Text(*it->second->jobs.back(), "verdict");
      const std::string regression = html::RegressionOf(*it->second);
      out += "<td class=\"verdict-cell " + Escape(verdict) +
             (regression.empty() ? "" : " regressed") + "\">" + Escape(verdict) +
             (regression.empty() ? "" : " <b class=\"regression\">" + Escape(regression) + "</b>") +
             "</td>";
    }
    out += "</tr>";
  }
  out +=
      "</tbody></table><h2>Across runs</h2><table class=\"sortable trend\"><thead><tr>"
      "<th>model</th><th>conversion</th><th>runs</th><th>verdicts</th><th>max |diff|</th>"
      "<th>latest max |diff|</th><th>p50 ms</th><th>regression</th></tr></thead><tbody>";
  for (const auto& [key, one] : series) {
    std::string verdicts;
    for (const json* job : one.jobs) {
      const std::string verdict = Text(*job, "verdict");
      verdicts += "<span class=\"run " + Escape(verdict) + "\" title=\"run " +
                  Escape(Text(*job, "run_id")) + " " + Escape(Text(*job, "finished_at")) + ": " +
                  Escape(verdict) + "\"></span>";
    }
    const std::string regression = html::RegressionOf(one);
    out += std::string("<tr") + (regression.empty() ? "" : " class=\"fail\"") + ">" +
           Cell(one.entry) + Cell(one.conversion) + NumCell(static_cast<double>(one.jobs.size())) +
           "<td>" + verdicts + "</td><td>" +
           html::SparklineSvg(Figures(one, "max_abs_error"), "max |diff| per run") + "</td>" +
           NumCell(Number(*one.jobs.back(), "max_abs_error")) + "<td>" +
           html::SparklineSvg(Figures(one, "p50_ms"), "median latency per run (ms)") + "</td>" +
           Cell(regression) + "</tr>";
  }
  return out + "</tbody></table>";
}

// A batch's summary.json: a grid of entries by conversion, errors by category.
std::string Batch(const json& summary) {
  const double exit_code = Number(summary, "exit_code", 3);
  std::string out = "<h1>convgate batch " +
                    VerdictBadge(exit_code == 0   ? "pass"
                                 : exit_code == 1 ? "fail"
                                                  : "error") +
                    "</h1><p>" + Escape(Text(summary, "entries")) +
                    " entries: " + Escape(Text(summary, "passed")) + " passed, " +
                    Escape(Text(summary, "failed")) + " failed, " +
                    Escape(Text(summary, "errors")) + " errors (manifest " +
                    Escape(Text(summary, "manifest")) + ")</p>";
  std::vector<std::string> conversions;
  std::map<std::string, std::map<std::string, const json*>> grid;  // model -> conversion -> job
  for (const json& job : Get(summary, "jobs")) {
    const std::string conversion =
        Text(job, "conversion").empty() ? "(run)" : Text(job, "conversion");
    if (std::find(conversions.begin(), conversions.end(), conversion) == conversions.end()) {
      conversions.push_back(conversion);
    }
    grid[Text(job, "model_id").empty() ? Text(job, "id") : Text(job, "model_id")][conversion] =
        &job;
  }
  out += "<h2>Models by conversion</h2><table class=\"sortable grid\"><thead><tr><th>model</th>";
  for (const std::string& conversion : conversions) out += "<th>" + Escape(conversion) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& [model, row] : grid) {
    out += "<tr>" + Cell(model);
    for (const std::string& conversion : conversions) {
      auto it = row.find(conversion);
      if (it == row.end()) {
        out += "<td></td>";
        continue;
      }
      const json& job = *it->second;
      const std::string verdict = Text(job, "verdict");
      // The job's own page when `convgate report` wrote one ("page"), else its report.json.
      const std::string folder = Text(job, "result_dir");
      const std::string link = !Text(job, "page").empty() ? Text(job, "page")
                               : folder.empty()           ? ""
                                                          : folder + "/report.json";
      out +=
          "<td class=\"verdict-cell " + Escape(verdict) + "\">" +
          (link.empty() ? Escape(verdict)
                        : "<a href=\"" + Escape(link) + "\">" + Escape(verdict) + "</a>") +
          (Text(job, "error_category").empty()
               ? ""
               : " <span class=\"small note\">" + Escape(Text(job, "error_category")) + "</span>") +
          "</td>";
    }
    out += "</tr>";
  }
  out += "</tbody></table>";
  const json& categories = Get(summary, "errors_by_category");
  if (categories.is_object() && !categories.empty()) {
    out += "<h2>Errors by category</h2><table><tbody>";
    for (const auto& [category, count] : categories.items()) {
      out += "<tr>" + Cell(category) + "<td class=\"num\">" + Escape(count.dump()) + "</td></tr>";
    }
    out += "</tbody></table>";
  }
  return out;
}

// A per-node run first: where the error entered is what the reader of a failure looks for.
std::string Section(const json& report) {
  if (report.contains("history") && report.contains("store")) {
    return "<section class=\"report store\">" + StoreHistory(report) + "</section>";
  }
  if (report.contains("jobs") && report.contains("manifest")) {
    return "<section class=\"report batch\">" + Batch(report) + "</section>";
  }
  const json& comparison = ComparisonOf(report);
  return "<section class=\"report\" data-command=\"" + Escape(Text(report, "command")) +
         "\" data-verdict=\"" + Escape(Text(report, "verdict")) + "\">" +
         Header(report, comparison) + PipelineGrid(report) + PerNode(report, comparison) +
         Outputs(comparison) + Agreements(comparison) + Benchmark(report, comparison) +
         "</section>";
}

}  // namespace

std::string RenderHtml(const std::vector<nlohmann::json>& reports) {
  std::string title = "convgate report";
  if (reports.size() == 1) {
    title = "convgate " + Text(reports[0], "command") + ": " + Text(reports[0], "verdict");
  }
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                    Escape(title) + "</title><style>" + kStyle + "</style></head><body>";
  for (const json& report : reports) out += Section(report);
  out +=
      "<p class=\"note small\">Written by convgate. Every figure comes from report.json; the "
      "charts are drawn in SVG, no script or network is needed to read them.</p>";
  return out + "<script>" + kScript + "</script></body></html>\n";
}

}  // namespace convgate::report
