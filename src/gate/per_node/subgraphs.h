// Per-node validation inside If/Loop/Scan bodies (internal to src/gate). ONNX Runtime exposes
// main-graph values only, so each side's model is rewritten for the samples at hand: the taken
// branch of an If is inlined, a Loop or Scan with a known, small iteration count unrolled
// (graph/subgraph_expand.h), round after round until no expandable node is left (nested bodies
// surface one level per round). Both sides get the same treatment, so body values keep matching
// by name; RunPerNode then runs on the expanded models.
#pragma once

#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/compare/policy.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/gate/per_node.h"
#include "gate/per_node/run.h"

namespace convgate::gate::internal {

// Unrolling copies a body once per iteration: a Loop or Scan running more iterations than this is
// left whole, and so is one whose copies would add more values than kMaxUnrolledValues (per
// side, over all rounds). Every copy's values are compared, so these bound the work, not memory
// (the memory budget's chunks bound that).
inline constexpr int64_t kMaxUnrolledIterations = 64;
inline constexpr int64_t kMaxUnrolledValues = 20000;

// RunPerNode on both sides with their subgraph bodies expanded; report.subgraphs lists every
// If/Loop/Scan node of either side (expanded or why not, its body values matched and unmatched).
// Runs RunPerNode on the models as given when neither has such a node.
Result<PerNodeReport> RunPerNodeWithSubgraphs(
    const PerNodeSide& source, const backends::LoadOptions& source_load, const PerNodeSide& target,
    const backends::LoadOptions& target_load, const std::vector<TensorMap>& samples,
    const compare::Policy& policy, const PerNodeOptions& options);

}  // namespace convgate::gate::internal
