// Per-node validation (compare --per-node) in every report form: the "per_node" object of
// report.json, the console section and JUnit cases. The compare renderers call these.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "convgate/gate/reduce.h"
#include "convgate/gate/results.h"
#include "report/json/reader.h"

namespace convgate::report::internal {

// The console lists this many nodes by added error (the JSON lists all).
inline constexpr size_t kTopAddedErrorRows = 5;

// report.json's "per_node", and back through the same description (json/per_node.cc). Throws
// BadField.
nlohmann::json PerNodeJson(const gate::PerNodeReport& per_node);
gate::PerNodeReport PerNodeFromJson(const JsonFields& json);

// The node a reduce reduced to, or null when it found none.
inline const gate::NodeCheck* ReducedNode(const gate::ReduceReport& report) {
  if (report.node < 0 || !report.comparison.per_node) return nullptr;
  return &report.comparison.per_node->nodes[report.node];
}

// The console section ("" without --per-node).
std::string PerNodeSection(const gate::CompareReport& report, bool color);

// (testcase name, failure lines) per matched tensor; lines empty for a pass.
std::vector<std::pair<std::string, std::vector<std::string>>> PerNodeCases(
    const gate::CompareReport& report);

// "node 'conv1' (Conv) -> 'conv1_out'", or "node #3 (Conv) -> 't'" for an unnamed node.
std::string NodeLabel(const gate::NodeCheck& node);

// NaN/Inf of one tensor on one sample, which its max |diff| (over finite pairs) does not show:
// "NaN introduced (256 of 2048 elements)", "NaN/Inf of the source not matched by the target (3 of
// 10 elements)"; "" when there is none.
std::string NonFiniteText(const gate::NodeSampleResult& result);

// NonFiniteText, with the finite error beside it when there is one, else "max |diff| 0.031".
std::string NodeErrorText(const gate::NodeSampleResult& result);

// Why --strict failed the gate, in one sentence (verify_result.json's error); "" when it did not.
std::string PerNodeGateFailure(const gate::CompareReport& report);

}  // namespace convgate::report::internal
