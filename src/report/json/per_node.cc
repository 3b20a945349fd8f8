// The "per_node" object of report.json. Node references (first_divergent, culprit, NaN origin,
// by_added_error) repeat the node's name, op type, input and output tensor names, so a reader (or a
// later `reduce`) needs no index lookup.
#include "report/json/codec.h"
#include "report/per_node_report.h"

namespace convgate::report::internal {
namespace {

using nlohmann::json;

json SampleJson(const gate::NodeSampleResult& result) {
  return {{"sample", result.sample},
          {"label", "sample " + std::to_string(result.sample)},
          {"passed", result.passed},
          {"source", result.source_desc},
          {"target", result.target_desc},
          {"elements", result.elements},
          {"mismatches", result.mismatches},
          {"max_abs_error", Number(result.max_abs_error)},
          {"mean_abs_error", Number(result.mean_abs_error)},
          {"max_rel_error", Number(result.max_rel_error)},
          {"p99_abs_error", Number(result.p99_abs_error)},
          {"cosine", Number(result.cosine)},
          {"atol", Number(result.atol)},
          {"rtol", Number(result.rtol)},
          {"source_range", {Number(result.source_min), Number(result.source_max)}},
          {"target_range", {Number(result.target_min), Number(result.target_max)}},
          {"source_non_finite", result.source_non_finite},
          {"target_non_finite", result.target_non_finite},
          {"introduced_non_finite", result.introduced_non_finite},
          {"introduced_nan", result.introduced_nan},
          {"introduced_inf", result.introduced_inf},
          {"inherited_non_finite", result.inherited_non_finite},
          {"failures", result.failures}};
}

json LocalJson(const gate::LocalError& local) {
  json out = {{"computed", local.computed},
              {"sample", local.sample},
              {"inputs_from_source", local.inputs_from_source},
              {"inputs_from_target", local.inputs_from_target}};
  if (!local.computed) {
    out["error"] = local.error;
    return out;
  }
  out["passed"] = local.result.passed;
  out["added_max_abs_error"] = Number(local.result.max_abs_error);
  out["result"] = SampleJson(local.result);
  return out;
}

json NodeRef(const gate::PerNodeReport& per_node, int idx) {
  if (idx < 0) return nullptr;
  const gate::NodeCheck& node = per_node.nodes[idx];
  json out = {{"index", idx},
              {"node_index", node.node_index},
              {"node", node.node},
              {"op_type", node.op_type},
              {"inputs", node.inputs},
              {"tensor", node.tensor},
              {"status", std::string(gate::NodeStatusName(node.status))}};
  if (node.local && node.local->computed) {
    out["added_max_abs_error"] = Number(node.local->result.max_abs_error);
  }
  return out;
}

json NodeJson(const gate::NodeCheck& node, int idx, const gate::PerNodeReport& per_node) {
  json out = NodeRef(per_node, idx);
  out["first_failing_sample"] = node.first_failing_sample;
  out["max_abs_error"] = Number(node.max_abs_error);
  if (!node.error.empty()) out["error"] = node.error;
  json samples = json::array();
  for (const gate::NodeSampleResult& result : node.samples) samples.push_back(SampleJson(result));
  out["samples"] = samples;
  out["local"] = node.local ? LocalJson(*node.local) : json(nullptr);
  return out;
}

json OriginJson(const gate::PerNodeReport& per_node, int idx, int sample) {
  if (idx < 0) return nullptr;
  json out = NodeRef(per_node, idx);
  out["sample"] = sample;
  return out;
}

}  // namespace

json PerNodeJson(const gate::PerNodeReport& per_node) {
  json nodes = json::array();
  for (size_t idx = 0; idx < per_node.nodes.size(); ++idx) {
    nodes.push_back(NodeJson(per_node.nodes[idx], static_cast<int>(idx), per_node));
  }
  json ranking = json::array();
  for (int idx : per_node.by_added_error) ranking.push_back(NodeRef(per_node, idx));
  return {{"strict", per_node.strict},
          {"local_error", per_node.local_error_mode},
          {"memory_budget_bytes", per_node.memory_budget_bytes},
          {"largest_chunk_bytes", per_node.largest_chunk_bytes},
          {"chunks", per_node.chunks},
          {"runs", per_node.runs},
          {"summary",
           {{"matched", per_node.nodes.size()},
            {"passed", per_node.summary.passed},
            {"failed", per_node.summary.failed},
            {"errored", per_node.summary.errored},
            {"unmatched", per_node.summary.unmatched}}},
          {"gate_failed", per_node.gate_failed},
          {"first_divergent", NodeRef(per_node, per_node.first_divergent)},
          {"culprit", NodeRef(per_node, per_node.culprit)},
          {"non_finite",
           {{"introduced_at", OriginJson(per_node, per_node.non_finite.introduced,
                                         per_node.non_finite.introduced_sample)},
            {"inherited_from", OriginJson(per_node, per_node.non_finite.inherited,
                                          per_node.non_finite.inherited_sample)}}},
          {"by_added_error", ranking},
          {"unmatched_target", per_node.unmatched_target},
          {"unmatched_source", per_node.unmatched_source},
          {"notes", per_node.notes},
          {"nodes", nodes}};
}

}  // namespace convgate::report::internal
