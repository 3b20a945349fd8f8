// The per-node stage of `compare --per-node` (per_node/run.h does the work): refused before
// anything runs when the sides cannot expose intermediates, run once every sample is judged.
#pragma once

#include <optional>

#include "convgate/gate/results.h"
#include "convgate/gate/workflows.h"
#include "convgate/session/side_pair.h"

namespace convgate::gate::internal {

// --per-node needs two models whose backends expose intermediate tensors, fed the same named
// inputs. REQUIRES: pair.SetUpSamples. Nothing to check without --per-node.
std::optional<GateError> CheckPerNodeStage(const CompareOptions& options,
                                           const session::SidePair& pair);

// Runs both models node by node over the pair's samples into report.per_node (inside If/Loop/
// Scan bodies too). Nothing without --per-node or without a data set.
std::optional<GateError> RunPerNodeStage(const CompareOptions& options, session::SidePair& pair,
                                         CompareReport& report);

}  // namespace convgate::gate::internal
