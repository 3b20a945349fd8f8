// Per-output aggregates over samples (CompareReport::aggregates).
#pragma once

#include <vector>

#include "convgate/gate/results.h"

namespace convgate::gate::internal {

std::vector<OutputAggregate> AggregateBySample(const std::vector<OutputCheck>& checks);

}  // namespace convgate::gate::internal
