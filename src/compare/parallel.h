// The threads of CompareTensors: fixed-size blocks handed to a few workers. Which worker takes
// which block varies from run to run; callers keep results per block (or merge per-worker results
// with order-independent operations) so the outcome never does.
#pragma once

#include <cstdint>
#include <functional>

#include "convgate/compare/tensor_compare.h"

namespace convgate::compare::internal {

// Workers for a tensor of `elements`: 1 below options.min_parallel_elements, else options.threads
// (0: std::thread::hardware_concurrency()), never more than there are blocks of kBlockElements.
int WorkerCount(int64_t elements, const CompareOptions& options);

// Calls body(worker, block) once for every block in [0, num_blocks), on `workers` threads, the
// calling thread being worker 0 (no thread is started when workers is 1). Blocks are handed out
// in increasing order, one at a time, so a slow block does not hold up the rest. Returns when
// every call has returned. REQUIRES: workers >= 1; body does not throw.
void ForEachBlock(int64_t num_blocks, int workers,
                  const std::function<void(int worker, int64_t block)>& body);

}  // namespace convgate::compare::internal
