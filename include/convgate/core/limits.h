// The memory and time a command may spend on what a user gives it: how large a tensor a file may
// hold, how many bytes of tensors one run may hold, and how long one model run may take. A hostile
// or broken input (a zip bomb, a model declaring a [1,1024,1024,1024] input, a Loop that never
// ends) then fails with exit code 3 naming the file or input and the limit, instead of exhausting
// memory or hanging. One struct travels with the options of every workflow (gate::DataOptions,
// backends::LoadOptions) and the readers take it; --max-tensor-bytes, --max-run-bytes and
// --run-timeout set it.
#pragma once

#include <cstdint>

namespace convgate {

// The memory this process may use: the least of physical memory, the memory limit of its cgroup
// (v2 memory.max or v1 memory.limit_in_bytes, of its own cgroup and every ancestor) and its
// RLIMIT_AS / RLIMIT_DATA (`ulimit -v`), so that a container's or a CI job's limit is what the
// defaults derive from. 0 when none of them can be read. Computed once per process.
int64_t UsableMemoryBytes();

// The CPUs this process may run on: its affinity mask (what Slurm's task/affinity or cgroup
// plugin, taskset or a container gave it), else std::thread::hardware_concurrency(); at least 1.
int UsableCores();

// Half of UsableMemoryBytes(), at least 64 MiB; 1 GiB when it is unknown. The default of both
// size limits below: a run holds its outputs twice (the runtime's buffers and convgate's tensors)
// and the runtime needs working memory beside them, so tensors over half of memory cannot be
// run or compared; refusing them up front turns an out-of-memory kill into a message.
int64_t DefaultSizeLimit();

struct Limits {
  // --max-tensor-bytes: the largest tensor a file may hold: an .npy, an .npz member (checked
  // against the member's declared size and its .npy header before anything is inflated), an ONNX
  // TensorProto, and each tensor an exec runner writes to outputs.npz.
  int64_t max_tensor_bytes = DefaultSizeLimit();
  // --max-run-bytes: the tensors one run holds at once: its inputs (every sample: they are all
  // held), the outputs of a sample of each model where their shapes are known, and saved outputs.
  // A run that needs more is refused before inputs are generated or a model runs; an .npz whose
  // members declare more in all is refused before any is inflated. A hard limit, unlike
  // per-node's --memory-budget, which only sizes chunks and never refuses.
  int64_t max_run_bytes = DefaultSizeLimit();
  // --run-timeout: wall-clock seconds one model run (one sample, one chunk of per-node
  // intermediates) may take in-process; <= 0 means none. ONNX Runtime runs are stopped through
  // its run termination flag; libtorch and OpenCV DNN cannot be interrupted in-process, so their
  // runs are not bounded (the exec backend has --exec-timeout, which kills its process group).
  // 600 s, as the conversion and exec timeouts: long enough for a large model on a 2-core
  // machine, short enough that a model that never ends (a Loop with a 1e12 trip count) does not
  // stall a pipeline for good.
  double run_timeout_seconds = 600.0;
};

}  // namespace convgate
