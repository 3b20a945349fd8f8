// Validating converted nodes against the source run: per node and step on the source's inputs
// (replay), and end to end with every target swapped in.
#pragma once

#include "pipeline/engine.h"

namespace convgate::pipeline::internal {

// Compares `target` with `source` (one step of one node, or of the pipeline outputs) under the
// report's policy and appends a check per source output (sample = step); an output count or name
// mismatch becomes a structure failure naming both counts. Returns true when the step failed.
bool CompareStep(int step, const std::string& what, const TensorMap& source,
                 const TensorMap& target, gate::CompareReport& report);

// Aggregates, hints and the verdict of a per-step comparison, and which steps failed.
StepVerdicts FinishComparison(gate::CompareReport& report, const std::vector<bool>& failed);

// The target of node `node_idx` on the inputs the source gave it at each step (LEAPP's per-node
// validation, sample i = step i). REQUIRES: the node has a target.
void ReplayNode(const Spec& spec, size_t node_idx, LoadedNode& loaded, const Trace& source,
                const compare::Policy& policy, NodeResult& result);

// The swapped run against the source run: each node's outputs step by step, NaN/Inf marked
// introduced (the node's inputs were finite) or inherited (from which input), and the pipeline
// outputs (report.outputs_compared).
// Each node is judged under its own policy (`node_policies`, by node index), the pipeline outputs
// under the report's.
void CompareSwapped(const Spec& spec, const Wiring& wiring, const Trace& source,
                    const Trace& swapped, const std::vector<compare::Policy>& node_policies,
                    PipelineReport& report);

}  // namespace convgate::pipeline::internal
