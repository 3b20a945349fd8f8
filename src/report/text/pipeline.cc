// The console text of `convgate pipeline`: the pipeline's interface and run order, one row per
// node saying which steps pass and fail, the first failure of each failing node, where NaN/Inf
// came from, and the pipeline outputs' verdict.
#include "convgate/report/report.h"
#include "report/benchmark_report.h"
#include "report/text/table.h"

namespace convgate::report {
namespace {

using internal::Paint;

std::string SanityCell(const gate::RunReport& run) {
  int failed = 0;
  for (const gate::SanityCheck& check : run.checks) failed += check.passed ? 0 : 1;
  if (failed == 0) return "pass (" + std::to_string(run.checks.size()) + " checks)";
  return std::to_string(failed) + " of " + std::to_string(run.checks.size()) + " checks fail";
}

std::string FirstSanityFailure(const gate::RunReport& run) {
  for (const gate::SanityCheck& check : run.checks) {
    if (!check.passed && !check.failures.empty()) {
      return "step " + std::to_string(check.sample) + " output '" + check.output +
             "': " + check.failures.front();
    }
  }
  return {};
}

std::string FirstComparisonFailure(const std::optional<gate::CompareReport>& report) {
  if (!report) return {};
  if (!report->structure_failures.empty()) return report->structure_failures.front();
  const gate::OutputCheck* check = report->FirstFailure();
  if (check == nullptr || check->failures.empty()) return {};
  return "step " + std::to_string(check->sample) + " output '" + check->output +
         "': " + check->failures.front();
}

std::string Header(const pipeline::PipelineReport& report, bool color) {
  // compare --feedback runs a pipeline of its own, with neither a name nor a spec file.
  std::string out = Paint(
      report.name.empty() ? std::string("convgate pipeline") : "convgate pipeline " + report.name,
      internal::kBold, color);
  if (!report.spec.empty()) out += " (" + report.spec + ")";
  if (report.steps > 0) out += ", " + std::to_string(report.steps) + " steps";
  out += "\n";
  for (const std::string& line : report.inputs) out += "  input     " + line + "\n";
  for (const std::string& line : report.outputs) out += "  output    " + line + "\n";
  for (const std::string& line : report.feedback) out += "  feedback  " + line + "\n";
  std::string order;
  for (const std::string& node : report.order) order += (order.empty() ? "" : " -> ") + node;
  if (!order.empty()) out += "  order     " + order + "\n";
  for (const std::string& line : report.bindings) out += "  binds     " + line + "\n";
  if (!report.data.origin.empty()) out += "  data      " + report.data.origin + "\n";
  return out;
}

std::string NodeTable(const pipeline::PipelineReport& report, bool color) {
  internal::Table table(
      report.validated ? std::vector<std::string>{"node", "sanity",
                                                  "replay (target on source inputs)", "swapped run"}
                       : std::vector<std::string>{"node", "sanity"});
  for (const pipeline::NodeResult& node : report.nodes) {
    std::vector<std::string> row = {node.name, SanityCell(node.source)};
    if (report.validated) {
      row.push_back(node.replay ? node.replay_steps.sentence : "no target");
      row.push_back(node.swapped ? node.swapped_steps.sentence : "-");
    }
    table.AddRow(std::move(row), node.passed ? "" : internal::kRed);
  }
  return table.Render(color);
}

std::string NodeDetails(const pipeline::NodeResult& node) {
  std::string out;
  const std::string sanity = FirstSanityFailure(node.source);
  if (!sanity.empty()) out += "  " + node.name + " sanity: " + sanity + "\n";
  const std::string replay = FirstComparisonFailure(node.replay);
  if (!replay.empty()) out += "  " + node.name + " replay: " + replay + "\n";
  for (const pipeline::NonFiniteEvent& event : node.non_finite) {
    out += "  " + node.name + ": " + (event.nan > 0 ? "NaN" : "Inf") + " " + event.origin +
           " at step " + std::to_string(event.step) + " in output '" + event.output + "' (" +
           std::to_string(event.nan + event.inf) + " elements)" +
           (event.from.empty() ? "" : ", from " + event.from) + "\n";
    break;  // the first event says where; report.json lists every step
  }
  if (node.per_node && node.per_node->per_node) {
    const gate::PerNodeReport& inside = *node.per_node->per_node;
    if (inside.first_divergent >= 0) {
      const gate::NodeCheck& first = inside.nodes[inside.first_divergent];
      out += "  " + node.name + " per-node: first divergent tensor '" + first.tensor + "' (" +
             first.op_type + ", node '" + first.node + "')\n";
    }
  }
  if (!node.per_node_note.empty())
    out += "  " + node.name + " per-node: " + node.per_node_note + "\n";
  return out;
}

}  // namespace

std::string ConsoleText(const pipeline::PipelineReport& report, bool color) {
  std::string out = Header(report, color);
  if (report.error || report.nodes.empty()) return out;
  if (report.steps == 0) return out + "the wiring is valid (--describe: nothing ran)\n";
  out += "\n" + NodeTable(report, color);
  for (const pipeline::NodeResult& node : report.nodes) out += NodeDetails(node);
  const std::string sanity = FirstSanityFailure(report.outputs_sanity);
  if (!sanity.empty()) out += "  pipeline outputs sanity: " + sanity + "\n";
  if (report.outputs_compared) {
    out += "pipeline outputs (targets swapped in): " + report.outputs_steps.sentence + "\n";
    const std::string first = FirstComparisonFailure(report.outputs_compared);
    if (!first.empty()) out += "  " + first + "\n";
  }
  for (const pipeline::PipelineReport::NodeBenchmark& node : report.benchmarks) {
    out += "\nnode " + node.node + ", " + internal::BenchmarkSection(node.benchmark, color);
  }
  const bool pass = report.verdict == gate::Verdict::kPass;
  out += Paint(pass ? "PASS" : "FAIL", pass ? internal::kGreen : internal::kRed, color);
  if (report.validated) {
    out += report.strict ? " (--strict: every node gates)"
                         : " (the pipeline outputs gate; node failures are reported, --strict "
                           "gates on them)";
  }
  if (!report.outputs_saved_to.empty()) out += "\noutputs saved to " + report.outputs_saved_to;
  return out + "\n";
}

}  // namespace convgate::report
