// The "per_node" object of report.json, described once (codec.h) and read back through the same
// description. Node references (first_divergent, culprit, NaN origin, by_added_error) repeat the
// node's name, op type, input and output tensor names, so a reader (or a later `reduce`) needs no
// index lookup; reading takes the index and leaves the repetition.
#include "report/json/codec.h"
#include "report/per_node_report.h"

namespace convgate::report::internal {
namespace {

const auto kStatuses = {
    std::pair<std::string_view, gate::NodeStatus>{"passed", gate::NodeStatus::kPassed},
    {"failed", gate::NodeStatus::kFailed},
    {"errored", gate::NodeStatus::kErrored}};

template <typename Io, typename Result>
void SampleFields(Io& io, Result& result) {
  io.Count("sample", result.sample);
  io.Derived("label", "sample " + std::to_string(result.sample));
  io.Bool("passed", result.passed);
  io.Text("source", result.source_desc);
  io.Text("target", result.target_desc);
  io.Count("elements", result.elements);
  io.Count("mismatches", result.mismatches);
  io.Number("max_abs_error", result.max_abs_error);
  io.Number("mean_abs_error", result.mean_abs_error);
  io.Number("max_rel_error", result.max_rel_error);
  io.Number("p99_abs_error", result.p99_abs_error);
  io.Number("cosine", result.cosine);
  io.Number("snr_db", result.snr_db, Default(0.0));
  io.Number("atol", result.atol);
  io.Number("rtol", result.rtol);
  io.Number("floor_multiple", result.floor_multiple, Default(-1.0));
  io.Range("source_range", result.source_min, result.source_max);
  io.Range("target_range", result.target_min, result.target_max);
  io.Count("source_non_finite", result.source_non_finite);
  io.Count("target_non_finite", result.target_non_finite);
  io.Count("introduced_non_finite", result.introduced_non_finite);
  io.Count("introduced_nan", result.introduced_nan);
  io.Count("introduced_inf", result.introduced_inf);
  io.Count("inherited_non_finite", result.inherited_non_finite);
  io.Texts("failures", result.failures);
}
const auto kSampleFields = [](auto& io, auto& result) { SampleFields(io, result); };

// An error is written only when the local error could not be computed, the result only when it
// was (its verdict and max |diff| repeated beside it).
template <typename Io, typename Local>
void LocalFields(Io& io, Local& local) {
  io.Bool("computed", local.computed);
  io.Count("sample", local.sample);
  io.Texts("inputs_from_source", local.inputs_from_source);
  io.Texts("inputs_from_target", local.inputs_from_target);
  io.Texts("inputs_cast", local.inputs_cast, Default(std::vector<std::string>{}));
  io.Texts("run_with", local.run_with, Default(std::vector<std::string>{}));
  io.Bool("within_rounding", local.within_rounding, Default(false));
  io.Text("rounding_dtype", local.rounding_dtype, Default(std::string()));
  io.Text("error", local.error, LeftOutIf(local.computed, std::string()));
  if (!local.computed) return;
  io.Derived("passed", local.result.passed);
  io.Derived("added_max_abs_error", Number(local.result.max_abs_error));
  io.Object("result", local.result, kSampleFields);
}

// What names a node, in its entry and in every reference to it.
template <typename Io, typename Node>
void NodeIdentityFields(Io& io, Node& node) {
  io.Count("node_index", node.node_index);
  io.Text("node", node.node);
  io.Text("op_type", node.op_type);
  io.Texts("inputs", node.inputs);
  io.Text("tensor", node.tensor);
  io.Text("target_tensor", node.target_tensor, Default(std::string()));
  io.Texts("fused", node.fused, Default(std::vector<std::string>{}));
  io.Choice("status", node.status, kStatuses);
  if (node.local && node.local->computed) {
    io.Derived("added_max_abs_error", Number(node.local->result.max_abs_error));
  }
}

// A reference to nodes[index]: the index, and the node's identity repeated (written only). The
// nodes are read before any reference to them.
template <typename Io, typename Index, typename Nodes>
void NodeRefFields(Io& io, Index& index, Nodes& nodes) {
  io.Count("index", index);
  if constexpr (Io::kReading) {
    if (static_cast<size_t>(index) >= nodes.size()) {
      io.fields().Fail("index", "no node " + std::to_string(index) + " (" +
                                    std::to_string(nodes.size()) + " nodes)");
    }
  } else {
    NodeIdentityFields(io, nodes[index]);
  }
}

// A reference, or null for none (-1).
template <typename Io, typename Index, typename Nodes>
void NodeRefOrNull(Io& io, std::string_view key, Index& index, Nodes& nodes) {
  io.ObjectOrNull(key, index, index < 0,
                  [&](auto& part, auto& ref) { NodeRefFields(part, ref, nodes); });
}

// Where NaN/Inf first appear: a reference and the sample, or null.
template <typename Io, typename Index, typename Nodes>
void OriginFields(Io& io, std::string_view key, Index& index, Index& sample, Nodes& nodes) {
  io.ObjectOrNull(key, index, index < 0, [&](auto& part, auto& ref) {
    NodeRefFields(part, ref, nodes);
    part.Count("sample", sample, {}, /*lo=*/-1);
  });
}

template <typename Io, typename Node>
void NodeFields(Io& io, Node& node, int position) {
  io.Derived("index", position);
  NodeIdentityFields(io, node);
  io.Count("first_failing_sample", node.first_failing_sample, {}, /*lo=*/-1);
  io.Number("max_abs_error", node.max_abs_error);
  io.OptionalObject("noise_floor", node.noise_floor, [](auto& part, auto& floor) {
    part.Number("max_abs", floor.max_abs);
    part.Number("max_rel", floor.max_rel);
    part.Count("samples", floor.samples);
  });
  io.Text("error", node.error, Default<std::string>(""));
  io.Objects("samples", node.samples, kSampleFields);
  io.OptionalObject("local", node.local, [](auto& part, auto& local) { LocalFields(part, local); });
}

// An If/Loop/Scan node and its bodies' values (counts derived, so a reader sees them at a glance).
template <typename Io, typename Check>
void SubgraphFields(Io& io, Check& check) {
  io.Text("side", check.side);
  io.Text("node", check.node);
  io.Text("op_type", check.op_type);
  io.Text("parent", check.parent, Default<std::string>(""));
  io.Bool("expanded", check.expanded);
  io.Text("expansion", check.expansion, Default<std::string>(""));
  io.Text("reason", check.reason, Default<std::string>(""));
  io.Derived("matched_count", check.matched.size());
  io.Derived("unmatched_count", check.unmatched.size());
  io.Texts("matched", check.matched);
  io.Objects("unmatched", check.unmatched, [](auto& part, auto& value) {
    part.Text("tensor", value.tensor);
    part.Text("reason", value.reason);
  });
  io.Count("not_taken", check.not_taken, Default<int64_t>(0));
}

template <typename Io, typename PerNode>
void PerNodeFields(Io& io, PerNode& per_node) {
  int position = 0;
  io.Objects("nodes", per_node.nodes,
             [&](auto& part, auto& node) { NodeFields(part, node, position++); });
  io.Bool("strict", per_node.strict);
  io.Text("local_error", per_node.local_error_mode);
  io.Count("memory_budget_bytes", per_node.memory_budget_bytes);
  io.Count("largest_chunk_bytes", per_node.largest_chunk_bytes);
  io.Count("chunks", per_node.chunks);
  io.Count("runs", per_node.runs);
  io.Text("calibration", per_node.calibration, Default(std::string()));
  io.Object("summary", per_node.summary, [&](auto& part, auto& summary) {
    part.Derived("matched", per_node.nodes.size());
    part.Count("passed", summary.passed);
    part.Count("failed", summary.failed);
    part.Count("errored", summary.errored);
    part.Count("unmatched", summary.unmatched);
  });
  io.Bool("gate_failed", per_node.gate_failed);
  NodeRefOrNull(io, "first_divergent", per_node.first_divergent, per_node.nodes);
  NodeRefOrNull(io, "culprit", per_node.culprit, per_node.nodes);
  io.Text("culprit_not_determined", per_node.culprit_not_determined, Default(std::string()));
  io.Object("non_finite", per_node.non_finite, [&](auto& part, auto& origin) {
    OriginFields(part, "introduced_at", origin.introduced, origin.introduced_sample,
                 per_node.nodes);
    OriginFields(part, "inherited_from", origin.inherited, origin.inherited_sample, per_node.nodes);
  });
  io.Bool("quantized", per_node.quantized, Default(false));
  io.Objects("by_added_error", per_node.by_added_error,
             [&](auto& part, auto& index) { NodeRefFields(part, index, per_node.nodes); });
  io.Texts("unmatched_target", per_node.unmatched_target);
  io.Texts("unmatched_source", per_node.unmatched_source);
  // Written only against an OpenVINO IR that fused source nodes away.
  bool fused_away = !per_node.not_comparable.empty();
  if constexpr (Io::kReading) fused_away = io.fields().Has("not_comparable");
  if (fused_away) {
    io.Objects("not_comparable", per_node.not_comparable, [](auto& part, auto& value) {
      part.Text("tensor", value.tensor);
      part.Text("reason", value.reason);
    });
  }
  io.Texts("notes", per_node.notes);
  // Written only for models with If/Loop/Scan nodes (reports without any, and those written
  // before subgraph expansion, have no "subgraphs").
  bool present = !per_node.subgraphs.empty();
  if constexpr (Io::kReading) present = io.fields().Has("subgraphs");
  if (present) {
    io.Objects("subgraphs", per_node.subgraphs,
               [](auto& part, auto& check) { SubgraphFields(part, check); });
  }
}
const auto kPerNodeFields = [](auto& io, auto& per_node) { PerNodeFields(io, per_node); };

}  // namespace

nlohmann::json PerNodeJson(const gate::PerNodeReport& per_node) {
  return JsonWriter::Write(per_node, kPerNodeFields);
}

gate::PerNodeReport PerNodeFromJson(const JsonFields& json) {
  return JsonReader::Read<gate::PerNodeReport>(json, kPerNodeFields);
}

}  // namespace convgate::report::internal
