#include "json_util.h"

#include <cmath>
#include <iterator>
#include <string>

#include "convgate/version.h"
#include "policy_json.h"

namespace convgate::report::internal {

using nlohmann::json;

json Number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

json SideJson(const gate::SideRecord& side) {
  json out{{"role", side.role},
           {"path", side.path},
           {"kind", side.kind},
           {"format", side.format},
           {"backend", side.backend},
           {"backend_version", side.backend_version},
           {"sha256", side.sha256},
           {"load_seconds", side.load_seconds},
           {"run_seconds", side.run_seconds},
           {"outputs", side.output_names},
           {"outputs_saved_to", side.outputs_saved_to},
           {"notes", side.notes}};
  // compare only: "name", or "position" with the renaming (a TorchScript side, saved outputs
  // that name nothing).
  if (!side.output_matching.empty()) out["output_matching"] = side.output_matching;
  if (!side.output_renames.empty()) out["output_renames"] = side.output_renames;
  // exec only: the command and the end of its stderr.
  if (!side.backend_command.empty()) out["backend_command"] = side.backend_command;
  if (!side.backend_log.empty()) out["backend_log"] = side.backend_log;
  return out;
}

json DatasetJson(const gate::DatasetRecord& dataset) {
  json tensors = json::array();
  for (const gate::InputRecord& input : dataset.tensors) {
    tensors.push_back({{"name", input.name}, {"dtype", input.dtype}, {"shape", input.shape}});
  }
  json out{{"origin", dataset.origin},
           {"samples", dataset.samples},
           {"tensors", tensors},
           {"notes", dataset.notes}};
  if (!dataset.saved_to.empty()) out["saved_to"] = dataset.saved_to;
  return out;
}

json ErrorJson(const std::optional<gate::GateError>& error) {
  if (!error.has_value()) return nullptr;
  return json{{"stage", gate::StageName(error->stage)},
              {"code", StatusCodeName(error->status.code())},
              {"message", error->status.message()}};
}

json ValueSummaryJson(const compare::ValueSummary& values) {
  return json{{"min", Number(values.min)},   {"max", Number(values.max)},
              {"mean", Number(values.mean)}, {"finite", values.finite},
              {"nan", values.nan},           {"pos_inf", values.pos_inf},
              {"neg_inf", values.neg_inf}};
}

namespace {

// `strings`: the element belongs to a string comparison, whose values are texts, not numbers.
json ElementJson(const compare::ElementReport& element, bool strings = false) {
  if (element.flat < 0) return nullptr;
  if (strings) {
    return json{{"flat_index", element.flat},
                {"index", element.index},
                {"source", element.source_text},
                {"target", element.target_text}};
  }
  return json{{"flat_index", element.flat},
              {"index", element.index},
              {"source", Number(element.source)},
              {"target", Number(element.target)},
              {"abs_error", Number(element.abs_error)},
              {"rel_error", Number(element.rel_error)},
              {"allowed", Number(element.allowed)}};
}

bool IsStringComparison(const compare::TensorComparison& cmp) {
  return cmp.source_desc.rfind("string[", 0) == 0 && cmp.target_desc.rfind("string[", 0) == 0;
}

json NonFiniteJson(const compare::NonFiniteSplit& nf) {
  return json{{"introduced_nan", nf.introduced_nan},
              {"introduced_inf", nf.introduced_inf},
              {"inherited", nf.inherited},
              {"shared_nan", nf.shared_nan},
              {"shared_inf", nf.shared_inf},
              {"first_introduced", nf.first_introduced},
              {"first_inherited", nf.first_inherited}};
}

json ErrorStatsJson(const compare::ErrorStats& errors) {
  json percentiles = json::object();
  for (size_t idx = 0; idx < std::size(compare::kPercentiles); ++idx) {
    char key[16];
    std::snprintf(key, sizeof(key), "p%g", compare::kPercentiles[idx]);
    percentiles[key] = Number(errors.abs_error_percentiles[idx]);
  }
  return json{{"compared", errors.compared},
              {"max_abs_error", Number(errors.max_abs_error)},
              {"mean_abs_error", Number(errors.mean_abs_error)},
              {"max_rel_error", Number(errors.max_rel_error)},
              {"mean_rel_error", Number(errors.mean_rel_error)},
              {"abs_error_percentiles", percentiles},
              {"max_abs_element", ElementJson(errors.max_abs)}};
}

}  // namespace

json ComparisonJson(const compare::TensorComparison& cmp) {
  json out{{"source", cmp.source_desc},
           {"target", cmp.target_desc},
           {"dtype_match", cmp.dtype_match},
           {"shape_match", cmp.shape_match},
           {"values_compared", cmp.values_compared},
           {"exact", cmp.exact},
           {"atol", cmp.tolerance.atol},
           {"rtol", cmp.tolerance.rtol},
           {"num_elements", cmp.num_elements},
           {"source_values", ValueSummaryJson(cmp.source_values)},
           {"target_values", ValueSummaryJson(cmp.target_values)},
           {"non_finite", NonFiniteJson(cmp.non_finite)},
           {"errors", ErrorStatsJson(cmp.errors)},
           {"mismatches", cmp.mismatches},
           {"mismatch_fraction", Number(cmp.mismatch_fraction)},
           {"atol_to_pass", Number(cmp.atol_to_pass)},
           {"rtol_to_pass", Number(cmp.rtol_to_pass)},
           {"worst_element", ElementJson(cmp.worst, IsStringComparison(cmp))},
           // What `convgate check` re-judges from (policy_json.cc): the comparison's own
           // sentences, the metrics and the error summary.
           {"comparison_failures", cmp.failures},
           {"metrics", MetricsJson(cmp.metrics)},
           {"error_summary", ErrorSummaryJson(cmp.summary)}};
  if (!cmp.notes.empty()) out["comparison_notes"] = cmp.notes;
  // What repeats the errors is left out (schema 2; the reader takes it from "errors").
  LeaveOutWhatErrorsRepeat(out["errors"], out["error_summary"]);
  json& max_abs = out["errors"]["max_abs_element"];
  if (max_abs.is_object() && max_abs["abs_error"] == out["errors"]["max_abs_error"]) {
    max_abs.erase("abs_error");
  }
  // Non-finite counts are almost always 0: left out when they are (and first indices when -1),
  // since a report repeats these objects for every output of every sample.
  for (const char* key : {"source_values", "target_values", "non_finite"}) {
    json& object = out[key];
    for (auto it = object.begin(); it != object.end();) {
      const bool index = it.key().rfind("first_", 0) == 0;
      const bool count = std::string(key) == "non_finite"
                             ? !index
                             : it.key() == "nan" || it.key() == "pos_inf" || it.key() == "neg_inf";
      const bool left_out = (count && *it == 0) || (index && *it == -1);
      it = left_out ? object.erase(it) : std::next(it);
    }
  }
  return out;
}

json Header(const Invocation& invocation, gate::Verdict verdict, ExitCode exit_code) {
  return json{{"schema_version", kSchemaVersion},
              {"tool", {{"name", "convgate"}, {"version", kVersion}, {"commit", kBuildCommit}}},
              {"command", invocation.command},
              {"argv", invocation.argv},
              {"host", HostJson()},
              {"started_at", invocation.started_at},
              {"seconds", invocation.seconds},
              {"verdict", gate::VerdictName(verdict)},
              {"exit_code", ToInt(exit_code)}};
}

}  // namespace convgate::report::internal
