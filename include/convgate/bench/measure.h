// Timing a loaded model: its first inference, a warm-up, then measured inferences one at a time or
// as concurrent requests (--streams), on the samples the gate itself runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::bench {

struct BenchSettings {
  int warmup = 5;           // --warmup: runs before measuring, not counted
  int iterations = 0;       // --iterations: measured runs; 0: run for `seconds`
  double seconds = 5.0;     // --bench-time, when iterations is 0
  int min_iterations = 10;  // a timed run measures at least this many
  int streams = 1;          // --streams: requests in flight at once
};

struct Measurement {
  double first_inference_ms = 0.0;
  int warmup = 0;
  // Every measured request's latency, in the order they finished.
  std::vector<double> latencies_ms;
  double wall_seconds = 0.0;  // of the measured part
  double throughput = 0.0;    // requests finished per second over wall_seconds
  int streams = 1;            // in flight at once, as run
  // Why fewer streams ran than asked ("the openvino backend runs one request at a time").
  std::string streams_note;
};

// Runs `model` on samples(0), samples(1), ... in turn (cycling over `sample_count`): the first
// inference, `warmup` more, then the measured ones. Streams > 1 need a model whose Run may be
// called from several threads (Model::concurrent_runs); others run one at a time, said in
// streams_note. A failed run stops the measurement with its error, naming the iteration.
Result<Measurement> Measure(backends::Model& model,
                            const std::function<const TensorMap&(size_t)>& samples,
                            size_t sample_count, const BenchSettings& settings,
                            const std::string& backend_name);

}  // namespace convgate::bench
