// `convgate repair`: keep the nodes float16 breaks in float32, one run at a time (repair.h).
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "convgate/core/join.h"
#include "convgate/core/numbers.h"
#include "convgate/gate/repair.h"
#include "convgate/graph/nodes.h"
#include "convgate/graph/onnx_model.h"

namespace convgate::gate {
namespace {

// The source's main graph: only its named nodes can be kept.
struct SourceGraph {
  std::map<std::string, std::string> op_types;             // node name -> op type
  std::map<std::string, std::string> producer;             // tensor -> the named node writing it
  std::map<std::string, std::vector<std::string>> inputs;  // node name -> its inputs
};

SourceGraph ReadSourceGraph(const std::string& source) {
  SourceGraph graph;
  Result<std::string> bytes = graph::ReadModelStructureBytes(source);
  if (!bytes.ok()) return graph;
  Result<std::vector<graph::NodeInfo>> listed = graph::ListNodes(*bytes, source);
  if (!listed.ok()) return graph;
  for (const graph::NodeInfo& node : *listed) {
    if (node.name.empty()) continue;
    graph.op_types[node.name] = node.op_type;
    graph.inputs[node.name] = node.inputs;
    for (const std::string& output : node.outputs) {
      if (!output.empty()) graph.producer[output] = node.name;
    }
  }
  return graph;
}

// The first node not kept yet up the inputs of `node`, walking through kept nodes (inputs in
// order, nearest first), and the tensor through which it feeds them.
std::optional<std::pair<std::string, std::string>> UnkeptAbove(const SourceGraph& source,
                                                               const std::string& node,
                                                               const std::set<std::string>& kept) {
  std::vector<std::string> frontier = {node};
  std::set<std::string> seen = {node};
  for (size_t at = 0; at < frontier.size(); ++at) {
    auto inputs = source.inputs.find(frontier[at]);
    if (inputs == source.inputs.end()) continue;
    for (const std::string& input : inputs->second) {
      auto producer = source.producer.find(input);
      if (producer == source.producer.end() || !seen.insert(producer->second).second) continue;
      if (kept.count(producer->second) == 0) return std::make_pair(producer->second, input);
      frontier.push_back(producer->second);
    }
  }
  return std::nullopt;
}

// The node up the inputs of the kept node writing `check` (UnkeptAbove), blamed for the error
// that node, in float32, still passes on; nullopt when `check` is not a kept node's output.
std::optional<KeptNode> AboveKept(const NodeCheck& check, const SourceGraph& source,
                                  const std::set<std::string>& kept) {
  auto writer = source.producer.find(check.tensor);
  if (writer == source.producer.end() || kept.count(writer->second) == 0) return std::nullopt;
  std::optional<std::pair<std::string, std::string>> above =
      UnkeptAbove(source, writer->second, kept);
  if (!above) return std::nullopt;
  return KeptNode{above->first, source.op_types.at(above->first),
                  "feeds " + writer->second + ", which fails in float32 too (max |diff| " +
                      FormatSignificant(check.max_abs_error, 3) + "): the error comes in '" +
                      above->second + "'",
                  0};
}

// A node kept in float32 whose output still fails takes its error from its inputs (a
// cancellation: x + 1000 is close in bfloat16, (x + 1000) - 1000 is not): the nearest node above
// it not kept yet is next. The failing check is the kept node's output under its original name,
// written by the Cast the conversion put after it.
std::optional<KeptNode> UpstreamOfKept(const PerNodeReport& per_node, const SourceGraph& source,
                                       const std::set<std::string>& kept) {
  for (const NodeCheck& check : per_node.nodes) {
    if (check.status != NodeStatus::kFailed) continue;
    if (std::optional<KeptNode> above = AboveKept(check, source, kept)) return above;
  }
  return std::nullopt;
}

// The model first diverges at the output of a node already kept in float32, finite: the error
// came in through its inputs, from a node whose own tensor passes the tolerance only because it
// is small (weights that underflow float16 make a layer's output ~1e-6, all of it within atol,
// before the next layer scales it back up). A non-finite value there is the kept node's own
// output overflowing its Cast back, which the next node in float32 resolves instead.
std::optional<KeptNode> AboveFirstDivergent(const PerNodeReport& per_node,
                                            const SourceGraph& source,
                                            const std::set<std::string>& kept) {
  if (per_node.first_divergent < 0) return std::nullopt;
  const NodeCheck& check = per_node.nodes[per_node.first_divergent];
  for (const NodeSampleResult& sample : check.samples) {
    if (sample.introduced_non_finite > 0 || sample.target_non_finite > 0) return std::nullopt;
  }
  return AboveKept(check, source, kept);
}

// The source node a check blames: the target node itself when the source names it (float16
// keeps the names; ONNX Runtime's QDQ quantizer keeps its Convs'), else, in a quantized target
// whose layer ends in a node of its own (int8-dynamic's rescaling Add after ConvInteger), the
// source node writing the tensor compared. "" when neither.
std::string SourceNodeOf(const PerNodeReport& per_node, int index, const SourceGraph& source) {
  if (index < 0 || index >= static_cast<int>(per_node.nodes.size())) return "";
  const NodeCheck& check = per_node.nodes[index];
  if (source.op_types.count(check.node) > 0) return check.node;
  if (!per_node.quantized) return "";
  auto writer = source.producer.find(check.tensor);
  return writer == source.producer.end() ? "" : writer->second;
}

// The node the last run blames next, by precedence: the NaN/Inf origin, the culprit, then added
// error; only nodes of the source not kept yet.
std::optional<KeptNode> NextToKeep(const PerNodeReport& per_node, const SourceGraph& source,
                                   const std::set<std::string>& kept) {
  const auto usable = [&](int index) {
    const std::string name = SourceNodeOf(per_node, index, source);
    return !name.empty() && kept.count(name) == 0;
  };
  const auto make = [&](int index, std::string why) {
    const std::string name = SourceNodeOf(per_node, index, source);
    return KeptNode{name, source.op_types.at(name), std::move(why), 0};
  };
  if (usable(per_node.non_finite.introduced)) {
    return make(per_node.non_finite.introduced,
                "introduced NaN/Inf (sample " +
                    std::to_string(per_node.non_finite.introduced_sample) + ")");
  }
  // In an int8 model a node left in float32 still reads its inputs as their producers' outputs
  // were quantized: when it still fails, its producer's quantization is the next suspect, before
  // any other layer.
  if (per_node.quantized) {
    if (std::optional<KeptNode> upstream = UpstreamOfKept(per_node, source, kept)) return upstream;
  }
  if (std::optional<KeptNode> above = AboveFirstDivergent(per_node, source, kept)) return above;
  if (usable(per_node.culprit)) {
    return make(per_node.culprit,
                "culprit: max |diff| " +
                    FormatSignificant(per_node.nodes[per_node.culprit].max_abs_error, 3));
  }
  for (int index : per_node.by_added_error) {
    if (!usable(index) || per_node.nodes[index].status == NodeStatus::kPassed) continue;
    return make(index,
                "failed, max |diff| " + FormatSignificant(per_node.nodes[index].max_abs_error, 3));
  }
  for (int index = 0; index < static_cast<int>(per_node.nodes.size()); ++index) {
    if (usable(index) && per_node.nodes[index].status == NodeStatus::kFailed) {
      return make(index, "the first failing node, max |diff| " +
                             FormatSignificant(per_node.nodes[index].max_abs_error, 3));
    }
  }
  return UpstreamOfKept(per_node, source, kept);
}

std::string VerdictWord(const VerifyReport& report) {
  if (report.verdict == Verdict::kPass) return "PASS";
  if (report.verdict == Verdict::kFail) return "FAIL";
  return "ERROR";
}

}  // namespace

RepairReport RepairGate(const RepairOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RepairReport report;
  const SourceGraph source = ReadSourceGraph(options.verify.source);
  // Nodes the user blocked already stay blocked; the repair adds to them.
  std::string given;
  if (auto found = options.verify.conversion.params.find("node_block_list");
      found != options.verify.conversion.params.end()) {
    given = found->second;
  }
  std::set<std::string> kept;
  const auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (int run = 1; run <= std::max(options.max_runs, 1); ++run) {
    VerifyOptions verify = options.verify;
    std::vector<std::string> names;
    for (const KeptNode& node : report.kept) names.push_back(node.node);
    std::string list = given;
    for (const std::string& name : names) list += (list.empty() ? "" : ",") + name;
    if (!list.empty()) verify.conversion.params["node_block_list"] = list;
    verify.compare.per_node.enabled = true;
    report.last = VerifyGate(verify);
    report.runs = run;
    std::string step = "run " + std::to_string(run) + ": " + std::to_string(report.kept.size()) +
                       " node(s) kept in float32: " + VerdictWord(report.last);
    if (report.repaired() || report.last.verdict == Verdict::kError) {
      report.steps.push_back(step);
      break;
    }
    std::optional<KeptNode> next;
    if (report.last.comparison && report.last.comparison->per_node) {
      next = NextToKeep(*report.last.comparison->per_node, source, kept);
    }
    if (!next) {
      report.gave_up =
          "no node of the source left to blame (the errors start in nodes the "
          "source does not name, or in an output the comparison judges without "
          "per-node help)";
      report.steps.push_back(step);
      break;
    }
    const bool out_of_time = options.max_seconds > 0.0 && elapsed() >= options.max_seconds;
    if (run == options.max_runs || out_of_time) {
      report.gave_up =
          (out_of_time ? "--max-seconds " + FormatShortest(options.max_seconds) + " spent after " +
                             std::to_string(run) + " run(s)"
                       : "--max-runs " + std::to_string(options.max_runs) + " reached") +
          " (next: " + next->op_type + " '" + next->node + "', " + next->why + ")";
      report.steps.push_back(step);
      break;
    }
    next->run = run;
    step += ", keeping " + next->op_type + " '" + next->node + "' (" + next->why + ")";
    report.steps.push_back(step);
    kept.insert(next->node);
    report.kept.push_back(*next);
  }
  report.seconds = elapsed();
  return report;
}

}  // namespace convgate::gate
