// report.json of each workflow: everything a reader needs to explain the verdict without
// re-running anything. The records are described once each (side.h, policy.h, results.h,
// comparison.h, agreement); verify and reduce hold the reports of the workflows they ran, in those
// workflows' own layouts, so tools reading run/compare reports read these.
#include "convgate/report/conversion.h"
#include "convgate/report/report.h"
#include "convgate/version.h"
#include "report/agreement_report.h"
#include "report/json/policy.h"
#include "report/json/results.h"
#include "report/json/side.h"
#include "report/per_node_report.h"

namespace convgate::report {
namespace {

using nlohmann::json;

// schema_version, tool, command, argv, host, started_at, seconds, verdict, exit_code and error.
json Header(const Invocation& invocation, gate::Verdict verdict,
            const std::optional<gate::GateError>& error) {
  json out{{"schema_version", kSchemaVersion},
           {"tool", {{"name", "convgate"}, {"version", kVersion}, {"commit", kBuildCommit}}},
           {"command", invocation.command},
           {"argv", invocation.argv},
           {"host", HostJson()},
           {"started_at", invocation.started_at},
           {"seconds", invocation.seconds},
           {"verdict", gate::VerdictName(verdict)},
           {"exit_code", ToInt(gate::ExitCodeFor(verdict, error))},
           {"error", nullptr}};
  if (error) {
    out["error"] = {{"stage", gate::StageName(error->stage)},
                    {"code", StatusCodeName(error->status.code())},
                    {"message", error->status.message()}};
  }
  return out;
}

template <typename Check>
json Summary(const std::vector<Check>& checks, size_t structure_failures) {
  int64_t passed = 0;
  json first = nullptr;
  for (const Check& check : checks) {
    if (check.passed) {
      ++passed;
    } else if (first.is_null()) {
      first = json{{"sample", check.sample}, {"output", check.output}};
    }
  }
  return json{{"checks", checks.size()},
              {"passed", passed},
              {"failed", static_cast<int64_t>(checks.size()) - passed},
              {"structure_failures", structure_failures},
              {"first_failure", first}};
}

const gate::NodeCheck* ReducedNode(const gate::ReduceReport& report) {
  if (report.node < 0 || !report.comparison.per_node) return nullptr;
  return &report.comparison.per_node->nodes[report.node];
}

}  // namespace

json ReportJson(const gate::RunReport& report, const Invocation& invocation) {
  json out = Header(invocation, report.verdict, report.error);
  out["model"] = internal::SideJson(report.model);
  out["inputs"] = internal::DatasetJson(report.inputs);
  out["bindings"] = report.bindings;
  out["rules"] = {"non-empty", "no NaN or Inf", "declared dtype",
                  "shape consistent with the declaration (symbolic dims bound consistently)"};
  out["structure_failures"] = report.structure_failures;
  out["results"] = internal::SanityResultsJson(report);
  out["summary"] = Summary(report.checks, report.structure_failures.size());
  return out;
}

json ReportJson(const gate::CompareReport& report, const Invocation& invocation) {
  json out = Header(invocation, report.verdict, report.error);
  out["source"] = internal::SideJson(report.source);
  out["target"] = internal::SideJson(report.target);
  out["inputs"] = internal::DatasetJson(report.inputs);
  out["policy"] = internal::PolicyJson(report.policy);
  if (!report.rejudged_from.empty()) out["rejudged_from"] = report.rejudged_from;
  out["structure_failures"] = report.structure_failures;
  out["results"] = internal::CompareResultsJson(report);
  out["aggregates"] = internal::AggregatesJson(report);
  out["summary"] = Summary(report.checks, report.structure_failures.size());
  out["agreements"] = internal::AgreementsJson(report);
  const auto [checks, failed] = internal::AgreementCheckCounts(report);
  const gate::AgreementCheckResult* first = report.FirstAgreementFailure();
  out["summary"]["agreement_checks"] = checks;
  out["summary"]["agreement_checks_failed"] = failed;
  out["summary"]["first_agreement_failure"] = first ? json(first->message) : json(nullptr);
  if (report.per_node) out["per_node"] = internal::PerNodeJson(*report.per_node);
  return out;
}

json ReportJson(const gate::VerifyReport& report, const Invocation& invocation) {
  json out = Header(invocation, report.verdict, report.error);
  out["source"] = report.source;
  out["target"] = report.target;
  out["conversion_path"] = report.conversion_path;
  out["conversion"] = report.conversion ? ConversionJson(*report.conversion) : json(nullptr);
  out["task"] = report.task ? json{{"task", report.task->task}, {"evidence", report.task->evidence}}
                            : json(nullptr);
  out["e2e_passed"] = report.e2e_passed();
  out["e2e"] = report.e2e ? ReportJson(*report.e2e, invocation) : json(nullptr);
  out["comparison"] =
      report.comparison ? ReportJson(*report.comparison, invocation) : json(nullptr);
  return out;
}

// The node reduced to, why, the files of the reproducer, its command and whether it reproduces;
// the per-node comparison that located the node keeps compare's layout.
json ReportJson(const gate::ReduceReport& report, const Invocation& invocation) {
  json out = Header(invocation, report.verdict, report.error);
  const gate::NodeCheck* node = ReducedNode(report);
  out["node"] = node ? json{{"name", node->node},        {"op_type", node->op_type},
                            {"index", node->node_index}, {"inputs", node->inputs},
                            {"output", node->tensor},    {"max_abs_error", node->max_abs_error}}
                     : json(nullptr);
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

}  // namespace convgate::report
