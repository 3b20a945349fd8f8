// The report's frontier (error_summary.h) in its own pass over the tensors, after pass 1.
//
// Why a second pass: a frontier is stored only when the pairs no other pair dominates (its depth 1)
// are at most kMaxFrontierPoints. Errors that grow with |s| (a relative error on every element,
// the usual fp16 or optimizer drift) have thousands of such pairs; the one-pass builder then
// sorted and pruned about a tenth of all pairs only to store nothing, and cost 8x the rest of the
// comparison on 16M elements. That number is bounded from below first from pass 1's joint
// histogram (free), then counted exactly in two cheap reads, so pairs are collected only when a
// frontier can be stored; the result is exactly what the one-pass builder gave.
#pragma once

#include <cstdint>

#include "convgate/compare/error_summary.h"
#include "convgate/compare/histogram.h"
#include "convgate/core/tensor.h"

namespace convgate::compare::internal {

// A lower bound on the pairs with |t - s| > 0 no other pair dominates (|s'| <= |s| and
// |t' - s'| >= |t - s|): the cells of `joint` no other non-empty cell covers from below and
// above (each holds at least one such pair). Cells of error bucket 0 are not counted, as they
// may hold only exact pairs.
int64_t UndominatedLowerBound(const JointHistogram& joint);

// The frontier of a floating comparison's finite pairs, on `workers` threads, as
// FrontierBuilder::Finish gives it; an empty Frontier, without collecting, when `joint` (pass 1's)
// or a count of the undominated pairs shows it cannot be stored. `compared` and `inexact` as for
// Finish.
Frontier CollectFrontier(const Tensor& source, const Tensor& target, const JointHistogram& joint,
                         int64_t compared, int64_t inexact, int workers);

}  // namespace convgate::compare::internal
