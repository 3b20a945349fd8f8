// `convgate bench` and `--benchmark`: each side's load, first inference, latency distribution,
// throughput and memory on the gate's own inputs, and the speed verdict between two sides.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "convgate/bench/records.h"
#include "convgate/gate/results.h"
#include "convgate/session/side_pair.h"

namespace convgate::gate {

// How to benchmark (the flags of `bench` and `--benchmark`).
struct BenchmarkOptions {
  // compare/verify --benchmark; `bench` always measures.
  bool enabled = false;
  bench::BenchSettings settings;
  bench::SpeedGate gate;
  // --cpus, --source-cpus, --target-cpus: the CPUs a side's runtime threads may use (its
  // process is pinned while the side loads and runs); empty: wherever the process may run.
  std::vector<int> source_cpus;
  std::vector<int> target_cpus;
};

// The sides (`target` empty: one model), their backends and data set: a PairSpec as compare's.
struct BenchOptions : session::PairSpec {
  BenchmarkOptions benchmark;
};

struct BenchReport {
  SideRecord source;  // role "model" when there is one side
  std::optional<SideRecord> target;
  DatasetRecord inputs;
  bench::BenchmarkRecord benchmark;
  // The speed gates' failures ("the target is 1.12x faster ...; --min-speedup 1.5 wants ...").
  std::vector<std::string> failures;
  Verdict verdict = Verdict::kError;
  std::optional<GateError> error;
};

// Loads and measures each side in turn (the source released before the target loads, so each
// side's peak memory is its own), on samples made for it from the same data options (the same
// seed gives both sides the same values; --load-inputs and --data the same files).
BenchReport BenchGate(const BenchOptions& options);

// The benchmark of a finished comparison (compare/verify --benchmark): both sides measured as
// BenchGate does, on `inputs` when given (a pipeline node's, made from its declarations) instead
// of samples made from each model's signature. Whether a speed gate failed is the record's
// (bench::SpeedGateFailed).
std::optional<GateError> BenchmarkPair(const session::PairSpec& spec,
                                       const BenchmarkOptions& options,
                                       bench::BenchmarkRecord& record,
                                       const inputs::Dataset* inputs = nullptr);

}  // namespace convgate::gate
