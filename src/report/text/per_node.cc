// Per-node validation on the console and in JUnit.
#include <cmath>
#include <cstdio>
#include <iterator>

#include "convgate/report/conversion.h"
#include "report/per_node_report.h"
#include "report/text/table.h"

namespace convgate::report::internal {
namespace {

std::string Count(int64_t count, int64_t elements) {
  return std::to_string(count) + " of " + std::to_string(elements) + " elements";
}

// "NaN introduced" / "Inf introduced" / "NaN and Inf introduced": which kinds the target alone has.
std::string IntroducedKinds(const gate::NodeSampleResult& result) {
  if (result.introduced_nan > 0 && result.introduced_inf > 0) return "NaN and Inf";
  return result.introduced_nan > 0 ? "NaN" : "Inf";
}

// The cell of a table: "0.031", "NaN 256/2048".
std::string ErrorCell(const gate::NodeSampleResult& result) {
  if (result.introduced_non_finite > 0) {
    return IntroducedKinds(result) + " " + std::to_string(result.introduced_non_finite) + "/" +
           std::to_string(result.elements);
  }
  if (result.inherited_non_finite > 0) {
    return "NaN/Inf " + std::to_string(result.inherited_non_finite) + "/" +
           std::to_string(result.elements) + " from the source";
  }
  return Short(result.max_abs_error);
}

// The node's error over every sample in the whole model: its first non-finite sample says more
// than the largest finite difference, which NaN/Inf elements do not enter.
std::string ModelErrorCell(const gate::NodeCheck& node) {
  for (const gate::NodeSampleResult& result : node.samples) {
    if (result.introduced_non_finite > 0 || result.inherited_non_finite > 0) {
      return ErrorCell(result);
    }
  }
  return Short(node.max_abs_error);
}

// What a node alone does: "adds max |diff| 0.031 by itself", "introduces NaN by itself (256 of
// 2048 elements)".
std::string LocalErrorText(const gate::NodeSampleResult& result) {
  if (result.introduced_non_finite > 0) {
    return "introduces " + IntroducedKinds(result) + " by itself (" +
           Count(result.introduced_non_finite, result.elements) + ")";
  }
  return "adds max |diff| " + Short(result.max_abs_error) + " by itself";
}

// "3.1x", "inf x" (a floor of 0 and an error that is not).
std::string FloorMultiple(double multiple) {
  return std::isinf(multiple) ? "inf x" : Short(multiple) + "x";
}

// Calibrated: where the floors came from and the tensor closest to (or furthest past) its floor.
std::string CalibrationLine(const gate::PerNodeReport& per_node) {
  if (per_node.calibration.empty()) return "";
  const gate::NodeCheck* worst = nullptr;
  double worst_multiple = -1;
  for (const gate::NodeCheck& node : per_node.nodes) {
    for (const gate::NodeSampleResult& result : node.samples) {
      if (result.floor_multiple > worst_multiple) {
        worst_multiple = result.floor_multiple;
        worst = &node;
      }
    }
  }
  std::string line = "  noise floors: per tensor, the source re-run with " + per_node.calibration +
                     "; a default atol rises to " + Short(compare::kNoiseFloorFactor) +
                     "x its tensor's floor";
  if (worst != nullptr) {
    line += "; largest error " + FloorMultiple(worst_multiple) + " its floor, at '" +
            worst->tensor + "'";
  }
  return line + "\n";
}

std::string SummaryLine(const gate::PerNodeReport& per_node) {
  const gate::PerNodeSummary& summary = per_node.summary;
  return "per-node: " + std::to_string(per_node.nodes.size()) +
         " matched tensors: " + std::to_string(summary.passed) + " passed, " +
         std::to_string(summary.failed) + " failed, " + std::to_string(summary.errored) +
         " errored; " + std::to_string(summary.unmatched) + " unmatched (" +
         std::to_string(per_node.chunks) + " chunk(s), " + std::to_string(per_node.runs) +
         " runs, memory budget " + FormatBytes(per_node.memory_budget_bytes) + ")\n";
}

// "[0, 6.53]"; "no finite value" when every element is NaN or Inf (the range of none read [0, 0]).
std::string RangeText(double min, double max, int64_t non_finite, int64_t elements) {
  if (elements > 0 && non_finite >= elements) return "no finite value";
  return "[" + Short(min) + ", " + Short(max) + "]";
}

std::string FirstDivergentLine(const gate::PerNodeReport& per_node) {
  if (per_node.first_divergent < 0) return "  first divergent: none\n";
  const gate::NodeCheck& node = per_node.nodes[per_node.first_divergent];
  std::string line = "  first divergent: " + NodeLabel(node);
  if (node.status == gate::NodeStatus::kErrored) return line + ": errored: " + node.error + "\n";
  for (const gate::NodeSampleResult& result : node.samples) {
    if (result.passed) continue;
    line += ", sample " + std::to_string(result.sample) + ": " + NodeErrorText(result);
    if (result.floor_multiple >= 0 && node.noise_floor) {
      line += " (" + FloorMultiple(result.floor_multiple) + " its noise floor " +
              Short(node.noise_floor->max_abs) + ")";
    }
    // A percentile of the finite errors says little beside NaN/Inf.
    if (NonFiniteText(result).empty()) line += ", p99 " + Short(result.p99_abs_error);
    line +=
        ", source " +
        RangeText(result.source_min, result.source_max, result.source_non_finite, result.elements) +
        ", target " +
        RangeText(result.target_min, result.target_max, result.target_non_finite, result.elements);
    if (!result.failures.empty()) line += "\n    - " + result.failures.front();
    break;
  }
  return line + "\n";
}

std::string JoinQuoted(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + ("'" + name + "'");
  return joined;
}

std::string CulpritLine(const gate::PerNodeReport& per_node) {
  if (per_node.local_error_mode == "none") return "";
  if (!per_node.culprit_not_determined.empty()) {
    // No node was run alone: "none" would claim a test that never ran.
    return per_node.first_divergent < 0
               ? ""
               : "  culprit: not determined (" + per_node.culprit_not_determined + ")\n";
  }
  if (per_node.culprit < 0) {
    return per_node.first_divergent < 0
               ? ""
               : "  culprit: none (no node fails on the source's inputs by itself)\n";
  }
  const gate::NodeCheck& node = per_node.nodes[per_node.culprit];
  const gate::LocalError& local = *node.local;
  std::string fed;
  if (!local.inputs_from_source.empty()) {
    fed = "the source's " + JoinQuoted(local.inputs_from_source);
  }
  if (!local.inputs_from_target.empty()) {
    fed += (fed.empty() ? "" : "; ") + std::string("the target's ") +
           JoinQuoted(local.inputs_from_target) + " (no source counterpart)";
  }
  const std::string with = local.run_with.empty()
                               ? ""
                               : " with the " + std::to_string(local.run_with.size()) +
                                     " quantization node(s) around it (" +
                                     JoinQuoted(local.run_with) + ")";
  return "  culprit: " + NodeLabel(node) + " " + LocalErrorText(local.result) + ", run alone" +
         with + " on " + (fed.empty() ? "its initializers" : fed) + "\n";
}

std::string NonFiniteLines(const gate::PerNodeReport& per_node) {
  std::string out;
  const gate::NonFiniteOrigin& origin = per_node.non_finite;
  if (origin.introduced >= 0) {
    const gate::NodeCheck& node = per_node.nodes[origin.introduced];
    out += "  NaN/Inf introduced at " + NodeLabel(node) + ", sample " +
           std::to_string(origin.introduced_sample);
    for (const gate::NodeSampleResult& result : node.samples) {
      if (result.sample == origin.introduced_sample) out += ": " + NonFiniteText(result);
    }
    out += "\n";
  }
  if (origin.inherited >= 0) {
    out += "  NaN/Inf inherited: already in the source at " +
           NodeLabel(per_node.nodes[origin.inherited]) + ", sample " +
           std::to_string(origin.inherited_sample) + "\n";
  }
  return out;
}

std::string AddedErrorTable(const gate::PerNodeReport& per_node, bool color) {
  if (per_node.by_added_error.empty()) return "";
  // A quantized target ranks by the SNR of each layer's own error (analysis.cc), shown beside.
  std::vector<std::string> header = {"node", "op", "tensor", "added max|diff|"};
  if (per_node.quantized) header.push_back("SNR alone");
  header.insert(header.end(), {"alone", "max|diff| in model"});
  Table table(header);
  for (size_t rank = 0; rank < per_node.by_added_error.size() && rank < kTopAddedErrorRows;
       ++rank) {
    const gate::NodeCheck& node = per_node.nodes[per_node.by_added_error[rank]];
    const bool passed = node.local->result.passed;
    // Failing a tolerance tighter than its dtype by rounding alone is not a fault of the node.
    const bool rounding = !passed && node.local->within_rounding;
    const std::string verdict =
        passed ? "pass" : (rounding ? node.local->rounding_dtype + " rounding" : "FAIL");
    std::vector<std::string> row = {
        node.node.empty() ? "#" + std::to_string(node.node_index) : node.node, node.op_type,
        node.tensor, ErrorCell(node.local->result)};
    if (per_node.quantized) row.push_back(Short(node.local->result.snr_db) + " dB");
    row.insert(row.end(), {verdict, ModelErrorCell(node)});
    table.AddRow(row, passed || rounding ? "" : kRed);
  }
  return per_node.quantized
             ? "  error added by each quantized layer (lowest SNR first: its own error against its "
               "signal, run alone on the source's tensors):\n" +
                   table.Render(color)
             : "  error added by each node (largest first):\n" + table.Render(color);
}

// One row per If/Loop/Scan node: what became of it and how many of its bodies' values were
// compared; the first unmatched value's reason when some were not (report.json lists them all).
std::string SubgraphTable(const gate::PerNodeReport& per_node, bool color) {
  if (per_node.subgraphs.empty()) return "";
  Table table({"side", "node", "op", "expanded", "compared", "not compared", "why not"});
  for (const gate::SubgraphCheck& check : per_node.subgraphs) {
    std::string why = check.expanded ? "" : check.reason;
    if (why.empty() && !check.unmatched.empty()) why = check.unmatched.front().reason;
    if (check.not_taken > 0) {
      why += std::string(why.empty() ? "" : "; ") + std::to_string(check.not_taken) +
             " values of the branch not taken";
    }
    table.AddRow(
        {check.side, check.node, check.op_type, check.expanded ? check.expansion : "no",
         std::to_string(check.matched.size()), std::to_string(check.unmatched.size()), why},
        check.expanded ? "" : kRed);
  }
  return "  If/Loop/Scan bodies (expanded into the main graph for these inputs):\n" +
         table.Render(color);
}

// Source tensors an OpenVINO IR fused away: "not comparable: 'conv' fused into 'BN_bn' (Add)".
std::string NotComparableLines(const gate::PerNodeReport& per_node) {
  std::string out;
  constexpr size_t kShown = 8;
  for (size_t idx = 0; idx < per_node.not_comparable.size() && idx < kShown; ++idx) {
    const gate::UnmatchedValue& value = per_node.not_comparable[idx];
    out += "  not comparable: '" + value.tensor + "' " + value.reason + "\n";
  }
  if (per_node.not_comparable.size() > kShown) {
    out += "  not comparable: " + std::to_string(per_node.not_comparable.size() - kShown) +
           " more (report.json lists them)\n";
  }
  return out;
}

std::string GateLine(const gate::PerNodeReport& per_node) {
  const int bad = per_node.summary.failed + per_node.summary.errored;
  if (per_node.strict && per_node.nodes.empty()) {
    return "  --strict: no intermediate tensor was compared, which fails the gate\n";
  }
  if (bad == 0) return "";
  if (per_node.strict) {
    return "  --strict: " + std::to_string(bad) + " intermediate failure(s) fail the gate\n";
  }
  return "  intermediate failures are reported, only outputs gate (--strict to gate on them)\n";
}

}  // namespace

std::string NonFiniteText(const gate::NodeSampleResult& result) {
  if (result.introduced_non_finite > 0) {
    return IntroducedKinds(result) + " introduced (" +
           Count(result.introduced_non_finite, result.elements) + ")";
  }
  if (result.inherited_non_finite > 0) {
    return "NaN/Inf of the source not matched by the target (" +
           Count(result.inherited_non_finite, result.elements) + ")";
  }
  return "";
}

std::string NodeErrorText(const gate::NodeSampleResult& result) {
  const std::string non_finite = NonFiniteText(result);
  if (non_finite.empty()) return "max |diff| " + Short(result.max_abs_error);
  if (result.max_abs_error > 0) {
    return non_finite + ", max |diff| " + Short(result.max_abs_error) + " elsewhere";
  }
  return non_finite;
}

std::string PerNodeGateFailure(const gate::CompareReport& report) {
  if (!report.per_node || !report.per_node->gate_failed) return "";
  const gate::PerNodeReport& per_node = *report.per_node;
  if (per_node.nodes.empty()) {
    return "--strict: no intermediate tensor was compared (the graphs share no intermediate "
           "tensor names)";
  }
  if (per_node.first_divergent < 0) return "";
  const gate::NodeCheck& node = per_node.nodes[per_node.first_divergent];
  std::string text = "--strict: intermediate " + NodeLabel(node);
  if (node.status == gate::NodeStatus::kErrored) return text + " errored: " + node.error;
  for (const gate::NodeSampleResult& result : node.samples) {
    if (result.passed) continue;
    text += " failed on sample " + std::to_string(result.sample);
    if (!result.failures.empty()) text += ": " + result.failures.front();
    break;
  }
  return text;
}

std::string NodeLabel(const gate::NodeCheck& node) {
  const std::string name =
      node.node.empty() ? "#" + std::to_string(node.node_index) : "'" + node.node + "'";
  std::string fused;
  for (const std::string& source : node.fused) fused += (fused.empty() ? "" : " + ") + source;
  if (!fused.empty()) fused = ", fused " + fused;
  const std::string read_as =
      node.target_tensor.empty() ? "" : " (the target's '" + node.target_tensor + "')";
  return "node " + name + " (" + node.op_type + fused + ") -> '" + node.tensor + "'" + read_as;
}

std::string PerNodeSection(const gate::CompareReport& report, bool color) {
  if (!report.per_node) return "";
  const gate::PerNodeReport& per_node = *report.per_node;
  std::string notes;
  for (const std::string& note : per_node.notes) notes += "  note: " + note + "\n";
  return Paint(SummaryLine(per_node), kBold, color) + CalibrationLine(per_node) +
         FirstDivergentLine(per_node) + CulpritLine(per_node) + NotComparableLines(per_node) +
         NonFiniteLines(per_node) + AddedErrorTable(per_node, color) +
         SubgraphTable(per_node, color) + notes + GateLine(per_node) + "\n";
}

std::vector<std::pair<std::string, std::vector<std::string>>> PerNodeCases(
    const gate::CompareReport& report) {
  std::vector<std::pair<std::string, std::vector<std::string>>> cases;
  if (!report.per_node) return cases;
  for (const gate::NodeCheck& node : report.per_node->nodes) {
    std::vector<std::string> lines;
    if (node.status == gate::NodeStatus::kErrored) lines.push_back("errored: " + node.error);
    for (const gate::NodeSampleResult& result : node.samples) {
      for (const std::string& failure : result.failures) {
        lines.push_back("sample " + std::to_string(result.sample) + ": " + failure);
      }
    }
    if (node.local && node.local->computed && !node.local->result.passed) {
      lines.push_back("alone on the source's inputs it " + LocalErrorText(node.local->result) +
                      (node.local->within_rounding
                           ? " (within " + node.local->rounding_dtype + " rounding: not a fault)"
                           : ""));
    }
    cases.emplace_back("per-node / " + NodeLabel(node), std::move(lines));
  }
  if (report.per_node->nodes.empty()) {
    cases.emplace_back("per-node / no intermediate compared",
                       std::vector<std::string>{PerNodeGateFailure(report)});
  }
  return cases;
}

}  // namespace convgate::report::internal
