#include "compare/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "compare/accumulator.h"

namespace convgate::compare::internal {

int WorkerCount(int64_t elements, const CompareOptions& options) {
  if (elements < options.min_parallel_elements) return 1;
  int threads = options.threads;
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  const int64_t blocks = (elements + kBlockElements - 1) / kBlockElements;
  return static_cast<int>(std::clamp<int64_t>(threads, 1, std::max<int64_t>(blocks, 1)));
}

void ForEachBlock(int64_t num_blocks, int workers,
                  const std::function<void(int worker, int64_t block)>& body) {
  std::atomic<int64_t> next_block{0};
  auto work = [&](int worker) {
    for (int64_t block = next_block++; block < num_blocks; block = next_block++) {
      body(worker, block);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(workers - 1));
  for (int worker = 1; worker < workers; ++worker) threads.emplace_back(work, worker);
  work(0);
  for (std::thread& thread : threads) thread.join();
}

}  // namespace convgate::compare::internal
