// Per-node validation (`compare --per-node`, LEAPP's per-node validation): options, the memory
// plan that keeps intermediates in chunks, and the analysis that names the first divergent node,
// the culprit and where NaN/Inf came from. The workflow itself runs inside CompareModelsGate.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/gate/per_node_results.h"

namespace convgate::gate {

struct PerNodeOptions {
  bool enabled = false;  // --per-node
  // --strict: a failed or errored intermediate fails the gate, and so does matching no
  // intermediate at all (nothing the user asked to gate on was compared). Off by default, as in
  // LEAPP (strict=False): intermediate failures are reported and only outputs gate.
  bool strict = false;
  // --memory-budget: bytes of intermediate tensors held at once, both sides together. <= 0 means
  // DefaultMemoryBudget(). The runtimes' own buffers come on top of it.
  int64_t memory_budget_bytes = 0;
  LocalErrorMode local_error = LocalErrorMode::kFailed;  // --local-error
  // Per-tensor noise floors (on with compare --calibrate and in verify, unless --no-calibrate): the
  // source's intermediates run a second time under a benign change (ONNX Runtime's graph
  // optimization disabled against the gate's level, and one thread), and each tensor whose atol is
  // a default is judged at max(atol, compare::kNoiseFloorFactor x its floor). Every tensor's floor
  // and its error as a multiple of it are reported. Costs one more source session and a run of each
  // source per chunk and sample.
  bool calibrate = false;
};

// 48 MiB, or a quarter of usable memory (core/limits.h) when that is less, at least 16 MiB: a
// fixed size, so per-node memory does not grow with the machine (plan.cc says why 48).
int64_t DefaultMemoryBudget();

// "none", "failed", "all"; InvalidArgument otherwise.
Result<LocalErrorMode> ParseLocalErrorMode(std::string_view text);

// Splits tensors (estimated bytes each, in order) into consecutive chunks whose sums stay within
// `budget`. A tensor larger than the budget gets a chunk of its own (it must be fetched to be
// compared at all). Returns the indices of each chunk in order; every index appears once.
std::vector<std::vector<size_t>> PlanChunks(const std::vector<int64_t>& bytes, int64_t budget);

// Fills report.summary, first_divergent, non_finite, culprit and by_added_error from the nodes'
// statuses, samples and local errors. Idempotent: called after comparison and again after local
// errors.
void AnalyzePerNode(PerNodeReport& report);

}  // namespace convgate::gate
