// The policy in one console line.
#pragma once

#include <string>

#include "convgate/compare/policy.h"

namespace convgate::report::internal {

// "|t - s| <= atol + rtol * |s|, elementwise, atol 1e-05, rtol 0.001 (per-dtype defaults where
// unset); logits: atol 0.0001".
std::string PolicySummaryText(const compare::Policy& policy);

}  // namespace convgate::report::internal
