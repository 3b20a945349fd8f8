// Exact order statistics of |t - s| without holding one value per element (radix selection).
//
// Pass 1 (the accumulator) already built the ErrorHistogram, whose buckets are the top 18 bits of
// each error's IEEE bit pattern. For each wanted rank, the cumulative counts name the bucket that
// holds it and its rank inside; a further pass over the tensors then collects only the errors in
// those buckets into a bounded scratch buffer, where nth_element finds the ranks. A bucket too
// big for the scratch (a tensor of billions, or millions of equal errors) is first narrowed by
// counting the next 16 bits of its keys, one pass per 16 bits; after 46 bits the value itself is
// known. Ranks the histogram already pins down (zeros, the exact min and max) need no pass.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "convgate/compare/histogram.h"
#include "convgate/core/tensor.h"

namespace convgate::compare::internal {

struct SelectionInput {
  const Tensor* source;
  const Tensor* target;
  bool exact;                       // integer comparison: errors are IntAbsDiff of the widened bits
  const ErrorHistogram* histogram;  // of |t - s| over the finite pairs, from pass 1
  int64_t zero_errors;              // how many of them are 0
  bool all_finite;                  // no NaN or Inf on either side
  int workers;
  int64_t scratch_values;  // the most values collected at once (CompareOptions)
};

// values[i] = the ranks[i]-th smallest |t - s| over the pairs finite on both sides, exactly.
// REQUIRES: 0 <= ranks[i] < input.histogram->count().
std::vector<double> SelectErrorRanks(const SelectionInput& input, std::span<const int64_t> ranks);

}  // namespace convgate::compare::internal
