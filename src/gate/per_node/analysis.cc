// Reading a per-node comparison: LEAPP's summary, the first divergent node, where NaN/Inf came
// from, and the culprit (the first node whose own error fails, not merely the first failing one).
#include <algorithm>
#include <limits>

#include "convgate/gate/per_node.h"

namespace convgate::gate {
namespace {

void CountSummary(PerNodeReport& report) {
  report.summary = PerNodeSummary{};
  for (const NodeCheck& node : report.nodes) {
    if (node.status == NodeStatus::kPassed) ++report.summary.passed;
    if (node.status == NodeStatus::kFailed) ++report.summary.failed;
    if (node.status == NodeStatus::kErrored) ++report.summary.errored;
  }
  report.summary.unmatched =
      static_cast<int>(report.unmatched_target.size() + report.unmatched_source.size());
}

int FirstDivergent(const std::vector<NodeCheck>& nodes) {
  for (size_t idx = 0; idx < nodes.size(); ++idx) {
    if (nodes[idx].status != NodeStatus::kPassed) return static_cast<int>(idx);
  }
  return -1;
}

// The first node (then sample) where `count` of a sample is positive.
void FirstWith(const std::vector<NodeCheck>& nodes, int64_t NodeSampleResult::*count, int& node_out,
               int& sample_out) {
  node_out = sample_out = -1;
  for (size_t idx = 0; idx < nodes.size(); ++idx) {
    for (const NodeSampleResult& sample : nodes[idx].samples) {
      if (sample.*count <= 0) continue;
      node_out = static_cast<int>(idx);
      sample_out = sample.sample;
      return;
    }
  }
}

// A node within its own rounding (LocalError::within_rounding) computes as exactly as its dtype
// allows: it fails a tolerance tighter than that dtype by rounding alone and is never the culprit.
bool LocallyFails(const NodeCheck& node) {
  return node.local && node.local->computed && !node.local->result.passed &&
         !node.local->within_rounding;
}

// Local errors compared across nodes of different magnitudes: how far past its allowance the
// node's worst element is would be fairer, but the absolute error is what a reader checks first
// and what the console prints, so the ranking uses it; NaN/Inf introduced locally ranks first.
// A quantized target's layers all add error, of every magnitude: the one whose own error is
// largest against its signal (the lowest SNR) is the one whose quantization dominates.
double AddedError(const NodeCheck& node, bool quantized) {
  const NodeSampleResult& local = node.local->result;
  if (local.introduced_non_finite > 0) return std::numeric_limits<double>::infinity();
  return quantized ? -local.snr_db : local.max_abs_error;
}

}  // namespace

void AnalyzePerNode(PerNodeReport& report) {
  CountSummary(report);
  report.first_divergent = FirstDivergent(report.nodes);
  FirstWith(report.nodes, &NodeSampleResult::introduced_non_finite, report.non_finite.introduced,
            report.non_finite.introduced_sample);
  FirstWith(report.nodes, &NodeSampleResult::source_non_finite, report.non_finite.inherited,
            report.non_finite.inherited_sample);
  report.culprit = -1;
  report.by_added_error.clear();
  for (size_t idx = 0; idx < report.nodes.size(); ++idx) {
    const NodeCheck& node = report.nodes[idx];
    if (!node.local || !node.local->computed) continue;
    report.by_added_error.push_back(static_cast<int>(idx));
    if (report.culprit < 0 && LocallyFails(node)) report.culprit = static_cast<int>(idx);
  }
  std::stable_sort(report.by_added_error.begin(), report.by_added_error.end(),
                   [&](int lhs, int rhs) {
                     return AddedError(report.nodes[lhs], report.quantized) >
                            AddedError(report.nodes[rhs], report.quantized);
                   });
  // Under --strict, matching nothing fails too: the intermediates the user asked to gate on were
  // never compared.
  report.gate_failed = report.strict && ((report.summary.failed + report.summary.errored) > 0 ||
                                         report.nodes.empty());
}

}  // namespace convgate::gate
