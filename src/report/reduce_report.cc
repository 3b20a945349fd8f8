// report.json and the console text of `convgate reduce`: the node reduced to, why, the files of
// the reproducer, its command and whether it reproduces; the per-node comparison that located
// the node keeps compare's layout.
#include "convgate/gate/reduce.h"
#include "convgate/report/report.h"
#include "json_util.h"
#include "per_node_report.h"
#include "table.h"

namespace convgate::report {

using nlohmann::json;

namespace {

const gate::NodeCheck* ReducedNode(const gate::ReduceReport& report) {
  if (report.node < 0 || !report.comparison.per_node) return nullptr;
  return &report.comparison.per_node->nodes[report.node];
}

json NodeJson(const gate::NodeCheck& node) {
  return {{"name", node.node},        {"op_type", node.op_type},
          {"index", node.node_index}, {"inputs", node.inputs},
          {"output", node.tensor},    {"max_abs_error", node.max_abs_error}};
}

}  // namespace

json ReportJson(const gate::ReduceReport& report, const Invocation& invocation) {
  json out =
      internal::Header(invocation, report.verdict, gate::ExitCodeFor(report.verdict, report.error));
  out["error"] = internal::ErrorJson(report.error);
  const gate::NodeCheck* node = ReducedNode(report);
  out["node"] = node ? NodeJson(*node) : json(nullptr);
  out["reason"] = report.reason;
  out["sample"] = report.sample;
  out["folder"] = report.out_dir.string();
  out["files"] = report.files;
  out["command"] = report.command;
  out["reproduces"] = report.reproduces;
  out["notes"] = report.notes;
  out["reproduction"] =
      report.reproduction ? ReportJson(*report.reproduction, invocation) : json(nullptr);
  out["comparison"] = ReportJson(report.comparison, invocation);
  return out;
}

std::string ConsoleText(const gate::ReduceReport& report, bool color) {
  std::string out = ConsoleText(report.comparison, color) + "\n";
  out += internal::Paint("convgate reduce", internal::kBold, color) + "\n";
  const gate::NodeCheck* node = ReducedNode(report);
  if (node != nullptr) {
    out += "  node     " + internal::NodeLabel(*node) + "\n";
    out += "  why      " + report.reason + "\n";
    out += "  sample   " + std::to_string(report.sample) + "\n";
  }
  if (!report.files.empty()) {
    out += "  folder   " + report.out_dir.string() + "/  (";
    for (size_t idx = 0; idx < report.files.size(); ++idx) {
      out += (idx ? ", " : "") + report.files[idx];
    }
    out += ")\n";
    out += "  command  " + report.command + "\n";
  }
  for (const std::string& note : report.notes) out += "  note: " + note + "\n";
  if (report.error) return out;
  const bool pass = report.verdict == gate::Verdict::kPass;
  out += internal::Paint(pass ? "REDUCED" : "NOT REDUCED", pass ? internal::kGreen : internal::kRed,
                         color);
  if (pass) {
    out += ": the one-node reproducer fails on its own (run repro.sh in the folder)\n";
  } else if (!report.files.empty()) {
    out += ": the node alone does not reproduce the failure\n";
  } else if (node != nullptr) {
    out += ": the node passes in the whole model, nothing to reduce there\n";
  } else {
    out += ": nothing to reduce\n";
  }
  return out;
}

}  // namespace convgate::report
