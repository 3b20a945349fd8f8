// report.json of each workflow: everything a reader needs to explain the verdict without
// re-running anything. Each workflow's report is one field list (codec.h) over its records (side.h,
// policy.h, results.h, comparison.h, agreement, per-node, conversion) that drives writing and
// reading back; verify and reduce hold the reports of the workflows they ran, in those workflows'
// own layouts, so tools reading run/compare reports read these.
#include "report/json/report_json.h"

#include <string>
#include <type_traits>
#include <vector>

#include "convgate/report/conversion.h"
#include "convgate/version.h"
#include "report/agreement_report.h"
#include "report/json/benchmark.h"
#include "report/json/codec.h"
#include "report/json/conversion.h"
#include "report/json/origin.h"
#include "report/json/policy.h"
#include "report/json/results.h"
#include "report/json/side.h"
#include "report/per_node_report.h"

namespace convgate::report {
namespace {

using internal::Default;
using internal::OrElse;
using nlohmann::json;

const auto kVerdicts = {std::pair<std::string_view, gate::Verdict>{"pass", gate::Verdict::kPass},
                        {"fail", gate::Verdict::kFail},
                        {"error", gate::Verdict::kError}};

// Where the workflow stopped: the stage, and the status's code and message.
template <typename Io, typename Error>
void ErrorFields(Io& io, Error& error) {
  io.Parsed("stage", error.stage, gate::StageName,
            internal::ByName(gate::StageName, gate::Stage::kInternal));
  StatusCode code = error.status.code();
  std::string message = error.status.message();
  io.Parsed("code", code, StatusCodeName, internal::ByName(StatusCodeName, StatusCode::kInternal));
  io.Text("message", message);
  if constexpr (Io::kReading) error.status = Status(code, std::move(message));
}

// schema_version, tool, command, argv, host, started_at, seconds, verdict, exit_code and error.
// The tool, the host and the exit code are written only (the exit code follows from the verdict
// and the error); invocation fields a hand-made report lacks read back empty.
template <typename Io, typename Inv, typename Verdict, typename Error>
void HeaderFields(Io& io, Inv& invocation, Verdict& verdict, Error& error) {
  int64_t schema = kSchemaVersion;
  io.Int("schema_version", schema);
  if constexpr (Io::kReading) {
    internal::CheckSchema(io.fields());
  } else {
    io.Derived("tool", {{"name", "convgate"}, {"version", kVersion}, {"commit", kBuildCommit}});
    io.Derived("host", HostJson());
  }
  io.Text("command", invocation.command);
  io.Texts("argv", invocation.argv, OrElse(std::vector<std::string>{}));
  io.Text("started_at", invocation.started_at, OrElse(std::string()));
  io.Number("seconds", invocation.seconds, OrElse(0.0));
  internal::ModelOriginsField(io, invocation.model_origins);
  io.Choice("verdict", verdict, kVerdicts);
  io.Derived("exit_code", ToInt(gate::ExitCodeFor(verdict, error)));
  io.OptionalObject("error", error, [](auto& part, auto& stopped) { ErrorFields(part, stopped); });
}

// "summary": counted from the checks, written only.
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

json CompareSummary(const gate::CompareReport& report) {
  json summary = Summary(report.checks, report.structure_failures.size());
  const auto [checks, failed] = internal::AgreementCheckCounts(report);
  const gate::AgreementCheckResult* first = report.FirstAgreementFailure();
  summary["agreement_checks"] = checks;
  summary["agreement_checks_failed"] = failed;
  summary["first_agreement_failure"] = first ? json(first->message) : json(nullptr);
  return summary;
}

template <typename Io, typename Report, typename Inv>
void RunFields(Io& io, Report& report, Inv& invocation) {
  HeaderFields(io, invocation, report.verdict, report.error);
  io.Described("model", report.model, internal::SideJson, internal::SideFromJson);
  io.Described("inputs", report.inputs, internal::DatasetJson, internal::DatasetFromJson);
  io.Texts("bindings", report.bindings);
  io.Derived("rules", {"non-empty", "no NaN or Inf", "declared dtype",
                       "shape consistent with the declaration (symbolic dims bound consistently)"});
  io.Texts("structure_failures", report.structure_failures);
  // The rows and their summary span the report (results.h).
  if constexpr (Io::kReading) {
    report.checks = internal::SanityResultsFromJson(io.fields());
  } else {
    io.Derived("results", internal::SanityResultsJson(report));
    io.Derived("summary", Summary(report.checks, report.structure_failures.size()));
  }
}

// compare --calibrate (gate/results.h CalibrationRecord).
template <typename Io, typename Record>
void CalibrationFields(Io& io, Record& record) {
  io.Text("status", record.status);
  io.Text("basis", record.basis, OrElse(std::string()));
  io.Text("detail", record.detail, OrElse(std::string()));
  io.Count("samples", record.samples);
  io.Number("seconds", record.seconds);
  io.Number("factor", record.factor);
}

// Written by calibrated comparisons only; read when there.
template <typename Io, typename Report>
void CalibrationField(Io& io, Report& report) {
  const auto fields = [](auto& part, auto& record) { CalibrationFields(part, record); };
  if constexpr (Io::kReading) {
    if (io.Has("calibration")) io.OptionalObject("calibration", report.calibration, fields);
  } else if (report.calibration) {
    io.OptionalObject("calibration", report.calibration, fields);
  }
}

template <typename Io, typename Report, typename Inv>
void CompareFields(Io& io, Report& report, Inv& invocation) {
  HeaderFields(io, invocation, report.verdict, report.error);
  io.Described("source", report.source, internal::SideJson, internal::SideFromJson);
  io.Described("target", report.target, internal::SideJson, internal::SideFromJson);
  io.Described("inputs", report.inputs, internal::DatasetJson, internal::DatasetFromJson);
  io.Described("policy", report.policy, internal::PolicyJson, internal::PolicyFromJson);
  io.Text("rejudged_from", report.rejudged_from, Default<std::string>(""));
  CalibrationField(io, report);
  io.Texts("warnings", report.warnings, Default(std::vector<std::string>{}));
  io.Texts("structure_failures", report.structure_failures);
  // The results leave out what their aggregates rows hold, and the summary counts them
  // (results.h): these span the report.
  if constexpr (Io::kReading) {
    report.checks = internal::CompareResultsFromJson(io.fields());
    report.aggregates = internal::AggregatesFromJson(io.fields(), report.checks);
    report.agreements = internal::AgreementsFromJson(io.fields());
  } else {
    io.Derived("results", internal::CompareResultsJson(report));
    io.Derived("aggregates", internal::AggregatesJson(report));
    io.Derived("agreements", internal::AgreementsJson(report));
    io.Derived("summary", CompareSummary(report));
  }
  io.DescribedIfAny("per_node", report.per_node, internal::PerNodeJson, internal::PerNodeFromJson);
  io.DescribedIfAny("benchmark", report.benchmark, internal::BenchmarkJson,
                    internal::BenchmarkFromJson);
}

// bench: one side ("model") or two, the inputs they ran on, and the benchmark.
template <typename Io, typename Report, typename Inv>
void BenchFields(Io& io, Report& report, Inv& invocation) {
  HeaderFields(io, invocation, report.verdict, report.error);
  io.Described("source", report.source, internal::SideJson, internal::SideFromJson);
  io.DescribedIfAny("target", report.target, internal::SideJson, internal::SideFromJson);
  io.Described("inputs", report.inputs, internal::DatasetJson, internal::DatasetFromJson);
  io.Described("benchmark", report.benchmark, internal::BenchmarkJson, internal::BenchmarkFromJson);
  io.Texts("failures", report.failures);
}

// A workflow's report held by another: its header repeats the invocation (read into a copy).
template <typename Inv>
std::remove_const_t<Inv> Nested(Inv& invocation) {
  return invocation;
}

// The index, in the comparison's per-node nodes, of the node `node` names (by graph index and
// output tensor).
int FindNode(const internal::JsonFields& json, const gate::CompareReport& comparison,
             const gate::NodeCheck& node) {
  if (comparison.per_node) {
    const std::vector<gate::NodeCheck>& nodes = comparison.per_node->nodes;
    for (size_t idx = 0; idx < nodes.size(); ++idx) {
      if (nodes[idx].node_index == node.node_index && nodes[idx].tensor == node.tensor) {
        return static_cast<int>(idx);
      }
    }
  }
  json.Fail("index", "node " + std::to_string(node.node_index) + " ('" + node.tensor +
                         "') is not in the comparison's per-node nodes");
}

template <typename Io, typename Report, typename Inv>
void VerifyFields(Io& io, Report& report, Inv& invocation) {
  HeaderFields(io, invocation, report.verdict, report.error);
  io.Text("source", report.source);
  io.Text("target", report.target);
  io.Text("conversion_path", report.conversion_path);
  io.Text("conversion_detail", report.conversion_detail, OrElse(std::string()));
  io.Texts("path_attempts", report.path_attempts, OrElse(std::vector<std::string>()));
  io.DescribedOrNull("conversion", report.conversion, ConversionJson, internal::ConversionFromJson);
  io.OptionalObject("task", report.task, [](auto& part, auto& task) {
    part.Text("task", task.task);
    part.Text("evidence", task.evidence);
  });
  io.Derived("e2e_passed", report.e2e_passed());
  io.OptionalObject("e2e", report.e2e, [&](auto& part, auto& run) {
    auto nested = Nested(invocation);
    RunFields(part, run, nested);
  });
  io.OptionalObject("comparison", report.comparison, [&](auto& part, auto& comparison) {
    auto nested = Nested(invocation);
    CompareFields(part, comparison, nested);
  });
  // Not written: the conversion passed exactly when the target's end-to-end run was reached.
  if constexpr (Io::kReading) report.conversion_passed = report.e2e.has_value();
}

// The node reduced to (repeating its name, op type, graph index, tensors and error), why, the
// files of the reproducer, its command and whether it reproduces; the per-node comparison that
// located the node keeps compare's layout, and is read first: the node is found in it.
// The header's "command" is written over by the reproducer's command (a reduce report has always
// held that there), so the invocation's command is read from the comparison's header.
template <typename Io, typename Report, typename Inv>
void ReduceFields(Io& io, Report& report, Inv& invocation) {
  HeaderFields(io, invocation, report.verdict, report.error);
  io.Object("comparison", report.comparison, [&](auto& part, auto& comparison) {
    auto nested = Nested(invocation);
    CompareFields(part, comparison, nested);
    if constexpr (Io::kReading) invocation.command = nested.command;
  });
  const bool no_node = internal::ReducedNode(report) == nullptr;
  io.ObjectOrNull("node", report.node, no_node, [&](auto& part, auto& index) {
    gate::NodeCheck node;
    if constexpr (!Io::kReading) node = *internal::ReducedNode(report);
    part.Text("name", node.node);
    part.Text("op_type", node.op_type);
    part.Count("index", node.node_index);
    part.Texts("inputs", node.inputs);
    part.Text("output", node.tensor);
    part.Number("max_abs_error", node.max_abs_error);
    if constexpr (Io::kReading) index = FindNode(part.fields(), report.comparison, node);
  });
  io.Text("reason", report.reason);
  io.Count("sample", report.sample);
  std::string folder = report.out_dir.string();
  io.Text("folder", folder);
  if constexpr (Io::kReading) report.out_dir = folder;
  io.Texts("files", report.files);
  io.Text("command", report.command);
  io.Bool("reproduces", report.reproduces);
  io.Texts("notes", report.notes);
  io.OptionalObject("reproduction", report.reproduction, [&](auto& part, auto& reproduction) {
    auto nested = Nested(invocation);
    CompareFields(part, reproduction, nested);
  });
}

// A node's steps that failed and the sentence naming them (pipeline).
template <typename Io, typename Steps>
void StepFields(Io& io, Steps& steps) {
  io.Count("steps", steps.steps);
  std::vector<int64_t> failed(steps.failed.begin(), steps.failed.end());
  io.Ints("failed_steps", failed);
  io.Text("steps_verdict", steps.sentence);
}

template <typename Io, typename Event>
void NonFiniteFields(Io& io, Event& event) {
  io.Count("step", event.step);
  io.Text("output", event.output);
  io.Count("nan", event.nan, Default<int64_t>(0));
  io.Count("inf", event.inf, Default<int64_t>(0));
  io.Text("origin", event.origin);
  io.Text("from", event.from, Default<std::string>(""));
}

// A comparison over steps (pipeline): compare's layout, sample i = step i, with the failing steps
// and their sentence as "steps_verdict".
template <typename Io, typename Comparison, typename Steps, typename Inv>
void StepComparison(Io& io, std::string_view key, Comparison& comparison, Steps& steps,
                    Inv& invocation) {
  io.OptionalObject(key, comparison, [&](auto& part, auto& compared) {
    auto nested = Nested(invocation);
    CompareFields(part, compared, nested);
    StepFields(part, steps);
  });
}

// A run's sanity checks over steps (pipeline): run's layout, sample i = step i.
template <typename Io, typename Run, typename Inv>
void StepRun(Io& io, std::string_view key, Run& run, Inv& invocation) {
  io.Object(key, run, [&](auto& part, auto& checked) {
    auto nested = Nested(invocation);
    RunFields(part, checked, nested);
  });
}

// One pipeline node: its source run, and with a target the replay on the source's inputs and the
// swapped run, and --per-node inside it.
template <typename Io, typename Node, typename Inv>
void NodeFields(Io& io, Node& node, Inv& invocation) {
  io.Text("name", node.name);
  io.Bool("passed", node.passed);
  io.Text("conversion", node.conversion, Default<std::string>(""));
  StepRun(io, "source", node.source, invocation);
  StepComparison(io, "replay", node.replay, node.replay_steps, invocation);
  StepComparison(io, "swapped", node.swapped, node.swapped_steps, invocation);
  io.Objects("non_finite", node.non_finite,
             [](auto& part, auto& event) { NonFiniteFields(part, event); });
  io.OptionalObject("per_node", node.per_node, [&](auto& part, auto& comparison) {
    auto nested = Nested(invocation);
    CompareFields(part, comparison, nested);
  });
  io.Text("per_node_note", node.per_node_note, Default<std::string>(""));
}

// `convgate pipeline`: the spec, its interface and run order, the inputs (one sample per step),
// every node, and the pipeline outputs (sanity; with targets compared step by step).
template <typename Io, typename Report, typename Inv>
void PipelineFields(Io& io, Report& report, Inv& invocation) {
  HeaderFields(io, invocation, report.verdict, report.error);
  io.Text("spec", report.spec);
  io.Text("name", report.name);
  io.Count("steps", report.steps);
  io.Texts("inputs_declared", report.inputs);
  io.Texts("outputs_declared", report.outputs);
  io.Texts("feedback", report.feedback);
  io.Texts("order", report.order);
  io.Texts("bindings", report.bindings);
  io.Bool("validated", report.validated);
  io.Bool("strict", report.strict);
  io.Described("inputs", report.data, internal::DatasetJson, internal::DatasetFromJson);
  io.Described("policy", report.policy, internal::PolicyJson, internal::PolicyFromJson);
  io.Text("outputs_saved_to", report.outputs_saved_to, Default<std::string>(""));
  io.Objects("nodes", report.nodes,
             [&](auto& part, auto& node) { NodeFields(part, node, invocation); });
  StepRun(io, "outputs", report.outputs_sanity, invocation);
  StepComparison(io, "outputs_compared", report.outputs_compared, report.outputs_steps, invocation);
  io.Objects(
      "benchmarks", report.benchmarks,
      [](auto& part, auto& node) {
        part.Text("node", node.node);
        part.Described("benchmark", node.benchmark, internal::BenchmarkJson,
                       internal::BenchmarkFromJson);
      },
      internal::Presence::kOmittedWhenEmpty);
}

template <typename Report, typename Fields>
json Write(const Report& report, const Invocation& invocation, Fields fields) {
  return internal::JsonWriter::Write(
      report, [&](auto& io, auto& record) { fields(io, record, invocation); });
}

template <typename Report, typename Fields>
Report Read(const internal::JsonFields& root, Invocation& invocation, Fields fields) {
  return internal::JsonReader::Read<Report>(
      root, [&](auto& io, auto& record) { fields(io, record, invocation); });
}

const auto kRunFields = [](auto& io, auto& report, auto& inv) { RunFields(io, report, inv); };
const auto kCompareFields = [](auto& io, auto& report, auto& inv) {
  CompareFields(io, report, inv);
};
const auto kVerifyFields = [](auto& io, auto& report, auto& inv) { VerifyFields(io, report, inv); };
const auto kReduceFields = [](auto& io, auto& report, auto& inv) { ReduceFields(io, report, inv); };
const auto kBenchFields = [](auto& io, auto& report, auto& inv) { BenchFields(io, report, inv); };
const auto kPipelineFields = [](auto& io, auto& report, auto& inv) {
  PipelineFields(io, report, inv);
};

}  // namespace

json ReportJson(const gate::RunReport& report, const Invocation& invocation) {
  return Write(report, invocation, kRunFields);
}

json ReportJson(const gate::CompareReport& report, const Invocation& invocation) {
  return Write(report, invocation, kCompareFields);
}

json ReportJson(const gate::VerifyReport& report, const Invocation& invocation) {
  return Write(report, invocation, kVerifyFields);
}

json ReportJson(const pipeline::PipelineReport& report, const Invocation& invocation) {
  return Write(report, invocation, kPipelineFields);
}

json ReportJson(const gate::ReduceReport& report, const Invocation& invocation) {
  return Write(report, invocation, kReduceFields);
}

json ReportJson(const gate::BenchReport& report, const Invocation& invocation) {
  return Write(report, invocation, kBenchFields);
}

namespace internal {

void CheckSchema(const JsonFields& root) {
  const int64_t schema = root.Int("schema_version");
  if (schema < kOldestReadableSchema || schema > kSchemaVersion) {
    root.Fail("schema_version", "is " + std::to_string(schema) + ", but this convgate reads " +
                                    std::to_string(kOldestReadableSchema) + " to " +
                                    std::to_string(kSchemaVersion));
  }
}

gate::RunReport RunReportFromJson(const JsonFields& root, Invocation& invocation) {
  return Read<gate::RunReport>(root, invocation, kRunFields);
}

gate::CompareReport CompareReportFromJson(const JsonFields& root, Invocation& invocation) {
  return Read<gate::CompareReport>(root, invocation, kCompareFields);
}

gate::VerifyReport VerifyReportFromJson(const JsonFields& root, Invocation& invocation) {
  return Read<gate::VerifyReport>(root, invocation, kVerifyFields);
}

gate::ReduceReport ReduceReportFromJson(const JsonFields& root, Invocation& invocation) {
  return Read<gate::ReduceReport>(root, invocation, kReduceFields);
}

gate::BenchReport BenchReportFromJson(const JsonFields& root, Invocation& invocation) {
  return Read<gate::BenchReport>(root, invocation, kBenchFields);
}

}  // namespace internal
}  // namespace convgate::report
