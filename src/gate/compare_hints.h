// "What to try next" for a failing output comparison: factual, derived from the statistics only.
#pragma once

#include <string>
#include <vector>

#include "convgate/compare/tensor_compare.h"
#include "convgate/gate/results.h"

namespace convgate::gate::internal {

// The tolerances every sample of one output would need (the largest over samples).
struct ToleranceToPass {
  double atol = 0.0;
  double rtol = 0.0;
  int samples = 1;
};

// Hints for one failing check, judged (policy, mismatches set): every count and tolerance in them
// is under the check's own policy. `needed` spans all samples, so the suggestion is the same for
// each sample's check and passes them all. REQUIRES: check.comparison.
std::vector<std::string> HintsFor(const OutputCheck& check, const ToleranceToPass& needed);

}  // namespace convgate::gate::internal
