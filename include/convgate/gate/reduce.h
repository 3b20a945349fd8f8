// `convgate reduce`: turns a failing comparison into a bug report in one folder. Per-node
// validation names the node that breaks the target (the culprit: the first node whose own error
// fails the tolerance; else the first divergent node); reduce cuts that node out of the target as a
// standalone ONNX model, captures the source's tensors for its inputs (inputs.npz) and for its
// outputs (expected.npz), writes the exact convgate command that reproduces the failure, and runs
// that command to prove the folder fails on its own.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "convgate/gate/results.h"
#include "convgate/gate/workflows.h"

namespace convgate::gate {

struct ReduceOptions {
  // Source and target models (both ONNX: the node is cut from the target, its inputs captured
  // from the source), data, policy and per-node settings. per_node.enabled is forced on.
  CompareOptions compare;
  std::filesystem::path out_dir;  // created; the reproducer's files go here
  // Reduce this node (a node name, or the name of a tensor it produces) instead of the culprit.
  std::string node;
};

struct ReduceReport {
  CompareReport comparison;  // the per-node comparison that located the node
  // The node reduced to: index into comparison.per_node->nodes, and why it was chosen
  // ("culprit: its own error fails the tolerance", "first divergent node", "--node").
  int node = -1;
  std::string reason;
  int sample = 0;  // the sample whose tensors were captured
  std::filesystem::path out_dir;
  std::vector<std::string> files;  // written, relative to out_dir
  // The command that reproduces the failure from out_dir (also in repro.sh).
  std::string command;
  // The reproducer run: compare expected.npz against the one-node model under the node's
  // tolerance. reproduces is true when it fails as the node failed in the whole model.
  std::optional<CompareReport> reproduction;
  bool reproduces = false;
  std::vector<std::string> notes;
  // kPass: a reproducer that fails on its own was written. kFail: nothing diverges (nothing to
  // reduce), --node names a node that passes in the whole model (nothing to reduce there; no files
  // are written), or the node alone does not fail (the error accumulates upstream; see notes).
  Verdict verdict = Verdict::kError;
  std::optional<GateError> error;
};

ReduceReport ReduceGate(const ReduceOptions& options);

}  // namespace convgate::gate
