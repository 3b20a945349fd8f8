// `convgate repair SOURCE --to fp16 -o OUT`: the nodes to keep in float32 so that the float16
// conversion passes the gate. Each run verifies the conversion with per-node validation; while it
// fails, the node where the error starts is kept in float32 (the fp16 kind's node_block_list):
// first the node that introduced NaN/Inf, then the culprit (the largest added error), then the
// next by added error. It stops when the gate passes, when nothing more can be blamed on a node
// of the source, or after max_runs runs. What it kept, and why, is the answer; the last run's
// model and verify report are the repaired model and its proof.
#pragma once

#include <string>
#include <vector>

#include "convgate/gate/verify.h"

namespace convgate::gate {

struct RepairOptions {
  // The source, the conversion (kind "fp16", with its parameters) and the comparison's options;
  // per-node validation is turned on by the repair.
  VerifyOptions verify;
  int max_runs = 8;
  // A budget for the whole repair: no run starts once it is spent (0: none). A run under way
  // finishes (its own limits are --run-timeout's and the conversion's --timeout).
  double max_seconds = 0.0;
};

struct KeptNode {
  std::string node;
  std::string op_type;
  // "introduced Inf (sample 0)", "culprit: added max |diff| 2.8e+02", "added max |diff| 16".
  std::string why;
  int run = 0;  // the run that blamed it (1-based)
};

struct RepairReport {
  std::vector<KeptNode> kept;
  int runs = 0;
  double seconds = 0.0;
  // One line per run: "run 2: 1 node kept (Conv 'a'): FAIL, culprit 'b'".
  std::vector<std::string> steps;
  // Why it stopped without passing ("no node of the source to blame: ..."), empty when it passed.
  std::string gave_up;
  VerifyReport last;  // the last run's verify: the repaired model's proof
  bool repaired() const { return last.verdict == Verdict::kPass; }
};

RepairReport RepairGate(const RepairOptions& options);

}  // namespace convgate::gate
