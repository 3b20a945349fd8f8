// Per-node validation against an OpenVINO IR compares like with like. OpenVINO folds a
// BatchNorm's scale into the preceding convolution's weights (and more such fusions): the layer
// left carries the value of the LAST source node it absorbed. An IR that kept the convolution's
// tensor name on that layer (OpenVINO up to 2022 did, listing the absorbed nodes in the layer's
// rt_info fused_names) would be compared with the source's convolution output and fail on a
// faithful conversion (cosine 0.858 on a detector); an IR that dropped the name (OpenVINO 2026)
// leaves the source's tensor unmatched without saying where it went. Both become "not
// comparable: fused into <layer>".
#include <algorithm>
#include <map>
#include <set>

#include "convgate/graph/openvino_ir.h"
#include "gate/per_node/run.h"

namespace convgate::gate::internal {
namespace {

// The source graph, indexed for the questions fusion asks.
struct SourceIndex {
  const std::vector<graph::NodeInfo>* nodes = nullptr;
  std::map<std::string, int> producer;                // tensor -> node
  std::map<std::string, int> by_name;                 // node name -> node
  std::map<std::string, std::vector<int>> consumers;  // tensor -> nodes reading it

  // A fused name as OpenVINO wrote it: an ONNX node's name, or (for an unnamed node) the name of
  // a tensor it produces. -1 when the source has neither.
  int Resolve(const std::string& name) const {
    if (auto found = by_name.find(name); found != by_name.end()) return found->second;
    if (auto found = producer.find(name); found != producer.end()) return found->second;
    return -1;
  }
  // How the report names a source node: its name, else its first output's.
  std::string Label(int index) const {
    const graph::NodeInfo& node = (*nodes)[index];
    if (!node.name.empty()) return node.name;
    return node.outputs.empty() ? "#" + std::to_string(index) : node.outputs.front();
  }
};

SourceIndex IndexSource(const std::vector<graph::NodeInfo>& nodes) {
  SourceIndex index;
  index.nodes = &nodes;
  for (size_t idx = 0; idx < nodes.size(); ++idx) {
    const int node = static_cast<int>(idx);
    if (!nodes[idx].name.empty()) index.by_name.emplace(nodes[idx].name, node);
    for (const std::string& output : nodes[idx].outputs) {
      if (!output.empty()) index.producer.emplace(output, node);
    }
    for (const std::string& input : nodes[idx].inputs) {
      if (!input.empty()) index.consumers[input].push_back(node);
    }
  }
  return index;
}

std::string LayerText(const graph::NodeInfo& layer) {
  return "'" + layer.name + "' (" + layer.op_type + ")";
}

void AddFused(const SourceIndex& source, int node, std::vector<int>& fused) {
  if (node >= 0 && std::find(fused.begin(), fused.end(), node) == fused.end()) {
    fused.push_back(node);
  }
}

// Step 1: the IR's own lists. A matched tensor whose producer a layer lists as fused but not last
// carries the last node's value under another node's name.
void ApplyFusedNames(const PerNodeContext& context, const SourceIndex& source,
                     std::map<size_t, std::vector<int>>& fused_by_check, PerNodeReport& report) {
  std::vector<NodeCheck> kept;
  for (NodeCheck& check : report.nodes) {
    const graph::NodeInfo& layer = context.target_nodes[check.node_index];
    std::vector<int> resolved;
    for (const std::string& name : layer.fused) AddFused(source, source.Resolve(name), resolved);
    const auto producer = source.producer.find(check.tensor);
    if (resolved.empty() || producer == source.producer.end()) {
      kept.push_back(std::move(check));
      continue;
    }
    const int last = *std::max_element(resolved.begin(), resolved.end());
    const bool listed = std::count(resolved.begin(), resolved.end(), producer->second) > 0;
    if (listed && producer->second != last) {
      // The layer computes more than this node (the convolution scaled by the BatchNorm after
      // it): its value is no source tensor's, and the last fused node's tensor is compared where
      // the IR carries it.
      report.not_comparable.push_back(
          {check.tensor,
           "fused into " + LayerText(layer) + " together with '" + source.Label(last) + "'"});
      continue;
    }
    fused_by_check[kept.size()] = resolved;
    kept.push_back(std::move(check));
  }
  report.nodes = std::move(kept);
}

// Step 2: source tensors the IR has no tensor for, whose consumers lead (through other such
// tensors) into a matched layer before any other: that layer absorbed their producer.
void InferFusedAway(const SourceIndex& source, std::map<size_t, std::vector<int>>& fused_by_check,
                    PerNodeReport& report) {
  std::map<int, size_t> check_of_node;  // source node -> the check of the tensor it produces
  for (size_t idx = 0; idx < report.nodes.size(); ++idx) {
    const auto producer = source.producer.find(report.nodes[idx].tensor);
    if (producer != source.producer.end()) check_of_node.emplace(producer->second, idx);
  }
  std::vector<std::string> still_unmatched;
  for (const std::string& tensor : report.unmatched_source) {
    const auto producer = source.producer.find(tensor);
    std::set<int> seen;
    std::vector<int> frontier;
    for (int consumer :
         source.consumers.count(tensor) ? source.consumers.at(tensor) : std::vector<int>{}) {
      frontier.push_back(consumer);
    }
    int reached = -1;  // the earliest matched node the tensor flows into
    while (!frontier.empty()) {
      const int node = frontier.back();
      frontier.pop_back();
      if (!seen.insert(node).second) continue;
      if (check_of_node.count(node)) {
        if (reached < 0 || node < reached) reached = node;
        continue;  // the matched layer's value is compared: nothing past it was fused into it
      }
      for (const std::string& output : (*source.nodes)[node].outputs) {
        if (output.empty() || !source.consumers.count(output)) continue;
        for (int consumer : source.consumers.at(output)) frontier.push_back(consumer);
      }
    }
    if (reached < 0 || producer == source.producer.end()) {
      still_unmatched.push_back(tensor);
      continue;
    }
    const size_t check = check_of_node.at(reached);
    std::vector<int>& fused = fused_by_check[check];
    AddFused(source, producer->second, fused);
    AddFused(source, reached, fused);
    report.not_comparable.push_back(
        {tensor, "fused into '" + report.nodes[check].node + "' (" + report.nodes[check].op_type +
                     "), which carries '" + report.nodes[check].tensor + "'"});
  }
  report.unmatched_source = std::move(still_unmatched);
}

// Step 3 (any target): a name the target kept for another value. Optimizers, ONNX Runtime's and
// convgate's fold_batchnorm alike, fold a BatchNormalization into the Conv before it and keep the
// Conv's output name, so the target's 'conv' holds what the source calls 'bn'. Compared by name,
// a faithful fold failed per-node with max |diff| 301 on tinycnn. Seen in the graphs: the
// tensor's only source consumer Q produces tensors the target lacks, and in the target the
// tensor feeds a node that, in the source, reads one of Q's outputs.
void InferFoldedUnderSameName(const PerNodeContext& context, const SourceIndex& source,
                              std::map<size_t, std::vector<int>>& fused_by_check,
                              PerNodeReport& report) {
  std::map<std::string, std::vector<const graph::NodeInfo*>> target_consumers;
  for (const graph::NodeInfo& node : context.target_nodes) {
    for (const std::string& input : node.inputs) {
      if (!input.empty()) target_consumers[input].push_back(&node);
    }
  }
  auto same_node = [](const graph::NodeInfo& a, const graph::NodeInfo& b) {
    return !a.name.empty() && !b.name.empty() ? a.name == b.name : a.op_type == b.op_type;
  };
  std::vector<NodeCheck> kept;
  std::map<size_t, std::vector<int>> kept_fused;  // fused_by_check at the kept checks' indices
  std::set<std::string> carried;                  // source tensors a kept name now carries
  for (size_t idx = 0; idx < report.nodes.size(); ++idx) {
    NodeCheck& check = report.nodes[idx];
    auto keep = [&] {
      if (auto found = fused_by_check.find(idx); found != fused_by_check.end()) {
        kept_fused[kept.size()] = found->second;
      }
      kept.push_back(std::move(check));
    };
    const auto readers = source.consumers.find(check.tensor);
    const auto in_target = target_consumers.find(check.tensor);
    if (readers == source.consumers.end() || readers->second.size() != 1 ||
        in_target == target_consumers.end()) {
      keep();
      continue;
    }
    const graph::NodeInfo& folded = (*source.nodes)[readers->second.front()];
    std::string carries;
    for (const std::string& output : folded.outputs) {
      if (output.empty() || context.target_produced.count(output)) continue;
      const auto next = source.consumers.find(output);
      if (next == source.consumers.end()) continue;
      for (int reader : next->second) {
        for (const graph::NodeInfo* target_reader : in_target->second) {
          if (same_node((*source.nodes)[reader], *target_reader)) carries = output;
        }
      }
    }
    if (carries.empty()) {
      keep();
      continue;
    }
    carried.insert(carries);
    report.not_comparable.push_back(
        {check.tensor, "the target's '" + check.tensor + "' holds the source's '" + carries +
                           "': " + folded.op_type + " '" + source.Label(readers->second.front()) +
                           "' was folded into '" + check.node + "' (" + check.op_type +
                           "), which kept its output's name"});
  }
  report.nodes = std::move(kept);
  fused_by_check = std::move(kept_fused);
  std::vector<std::string> still_unmatched;
  for (const std::string& tensor : report.unmatched_source) {
    if (carried.count(tensor)) {
      report.not_comparable.push_back(
          {tensor, "folded away: the target computes it under the name of the tensor before it"});
    } else {
      still_unmatched.push_back(tensor);
    }
  }
  report.unmatched_source = std::move(still_unmatched);
}

}  // namespace

void ApplyFusion(const PerNodeContext& context, PerNodeReport& report) {
  if (context.source_nodes.empty()) return;
  const SourceIndex source = IndexSource(context.source_nodes);
  std::map<size_t, std::vector<int>> fused_by_check;  // index into report.nodes -> source nodes
  ApplyFusedNames(context, source, fused_by_check, report);
  InferFoldedUnderSameName(context, source, fused_by_check, report);
  if (graph::IsOpenVinoIr(context.target.path)) InferFusedAway(source, fused_by_check, report);
  for (auto& [check, fused] : fused_by_check) {
    std::sort(fused.begin(), fused.end());
    if (fused.size() < 2) continue;  // a layer that carries one source node fused nothing
    for (int node : fused) report.nodes[check].fused.push_back(source.Label(node));
  }
}

}  // namespace convgate::gate::internal
