// Inputs that exercise a Hugging Face model (backends/hf_inputs.h), used in place of convgate's
// generic generation when the side that decides the inputs runs on the hf backend and the user
// asked for nothing else: no --load-inputs and none of --fill, --val-range, --shape, --dim (any
// of those means "generate as I say", as for every other model).
#pragma once

#include <optional>

#include "convgate/inputs/dataset.h"
#include "convgate/session/options.h"
#include "convgate/session/records.h"

namespace convgate::session {

// nullopt when the generic rules apply; the dataset (origin: what the inputs are) otherwise.
Result<std::optional<inputs::Dataset>> HfModelInputs(const SideRecord& side,
                                                     const DataOptions& data);

}  // namespace convgate::session
