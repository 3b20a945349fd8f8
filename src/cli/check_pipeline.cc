// `convgate check PIPELINE/report.json`: a pipeline's comparisons re-judged under a new policy:
// each node's target replayed and swapped in, and the pipeline's outputs. They are compare reports
// nested in the pipeline's, each read and re-judged as `check` does one.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/check_batch.h"
#include "convgate/core/file_util.h"
#include "convgate/core/text_table.h"
#include "convgate/gate/rejudge.h"
#include "convgate/report/json_text.h"
#include "convgate/report/read_report.h"
#include "convgate/report/render.h"

namespace convgate::cli {
namespace {

// `key` of `object` when it is a string, else "".
std::string TextOf(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

struct Rejudged {
  std::string name;  // "rnn (replay)", "pipeline outputs"
  std::string was;
  std::string now;
  std::string detail;
  bool gates = false;  // decides the exit code: the outputs, and every node with --strict
  ExitCode exit_code = ExitCode::kPassed;
};

Rejudged Rejudge(const std::string& name, nlohmann::json comparison, bool gates,
                 const compare::Policy& policy, const std::string& path,
                 const report::Invocation& invocation) {
  Rejudged one;
  one.name = name;
  one.gates = gates;
  one.was = TextOf(comparison, "verdict");
  // Written under the pipeline's name; read as the compare report it is.
  comparison["command"] = "compare";
  Result<gate::CompareReport> saved =
      report::ParseCompareReport(comparison.dump(), path + ": " + name);
  if (!saved.ok()) {
    one.now = "error";
    one.detail = saved.status().message();
    one.exit_code = ExitCode::kCannotRun;
    return one;
  }
  report::Invocation own = invocation;
  const report::Rendering rendered = report::Render(
      gate::RejudgeCompareReport(std::move(saved).value(), policy, path), own, false);
  one.now = rendered.report.value("verdict", "error");
  one.detail = LastLine(rendered.console);
  one.exit_code = rendered.exit_code;
  return one;
}

}  // namespace

ExitCode CheckPipelineResult(const nlohmann::json& report, const std::string& path,
                             const compare::Policy& policy, const OutputOptions& output,
                             report::Invocation& invocation) {
  const bool strict = report.contains("strict") && report["strict"] == true;
  std::vector<Rejudged> rows;
  if (report.contains("nodes") && report["nodes"].is_array()) {
    for (const nlohmann::json& node : report["nodes"]) {
      if (!node.is_object()) continue;
      for (const char* run : {"replay", "swapped"}) {
        if (node.contains(run) && node[run].is_object()) {
          rows.push_back(Rejudge(TextOf(node, "name") + " (" + run + ")", node[run], strict, policy,
                                 path, invocation));
        }
      }
    }
  }
  if (report.contains("outputs_compared") && report["outputs_compared"].is_object()) {
    rows.push_back(
        Rejudge("pipeline outputs", report["outputs_compared"], true, policy, path, invocation));
  }
  if (rows.empty()) {
    return ReportError(gate::Stage::kLoad,
                       Status::DataLoss(path + ": the pipeline compared nothing (no node has a "
                                               "target): nothing to re-judge"));
  }
  ExitCode exit_code = ExitCode::kPassed;
  for (const Rejudged& row : rows) {
    if (row.exit_code == ExitCode::kCannotRun) exit_code = ExitCode::kCannotRun;
    if (row.gates && row.exit_code == ExitCode::kFailed && exit_code == ExitCode::kPassed) {
      exit_code = ExitCode::kFailed;
    }
  }
  if (output.json) {
    nlohmann::json printed = nlohmann::json::array();
    for (const Rejudged& row : rows) {
      printed.push_back({{"name", row.name},
                         {"was", row.was},
                         {"now", row.now},
                         {"gates", row.gates},
                         {"detail", row.detail}});
    }
    std::cout << DumpJson(printed, output) << "\n";
    return exit_code;
  }
  TextTable table({"comparison", "was", "now", "detail"});
  for (const Rejudged& row : rows) {
    table.AddRow({row.name + (row.gates ? "" : " *"), row.was, row.now, row.detail},
                 row.now == "fail" || row.now == "error" ? kRed : "");
  }
  std::cout << "convgate check: " << rows.size() << " comparisons of the pipeline " << path
            << " re-judged\n"
            << table.Render(UseColor(output))
            << (strict ? "" : "* a node's comparison: shown, not gating (--strict gates on it)\n");
  return exit_code;
}

}  // namespace convgate::cli
