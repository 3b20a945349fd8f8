// verify, before converting: everything the source alone shows about the data and policy flags,
// so that a usage error is exit 2 in milliseconds instead of an end-to-end failure after a long
// conversion (and never a verdict).
#pragma once

#include <optional>

#include "convgate/core/signature.h"
#include "convgate/gate/results.h"
#include "convgate/gate/workflows.h"
#include "convgate/inputs/dataset.h"

namespace convgate::gate::internal {

struct SourceFacts {
  Signature signature;
  // The inputs the comparison will use, when the source alone decides them (not for a
  // TorchScript source without --shape or --load-inputs: the converted model's declarations
  // decide those).
  std::optional<inputs::Dataset> dataset;
};

// Loads the source and checks the flags against it: per-output tolerances and agreement checks
// name its outputs; --fill/--val-range/--shape name its inputs; the inputs can be generated (or
// loaded) and fit it. Errors: Stage::kFlags for a flag that does not fit (exit 2); kLoad and
// kInputs for a source or an inputs file that cannot be used (exit 3).
std::optional<GateError> PrecheckSource(const CompareOptions& options, SourceFacts& facts);

}  // namespace convgate::gate::internal
