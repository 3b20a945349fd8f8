// What a benchmark found, as the report writes it: each side's timings, latency distribution,
// throughput and memory; the machine's state; and the speed verdict between the sides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convgate/bench/latency.h"
#include "convgate/bench/machine.h"
#include "convgate/bench/measure.h"
#include "convgate/bench/speed.h"

namespace convgate::bench {

struct SideBenchmark {
  std::string role;  // "model", "source", "target"
  std::string path;
  std::string backend;
  std::string settings;  // the backend's own (Model::settings): provider, threads, precision
  // "2 (--threads)", "runtime default"; and the CPUs the side was pinned to ("0-1", all when
  // not pinned).
  std::string threads;
  std::string affinity;
  double load_seconds = 0.0;  // load and compile
  double first_inference_ms = 0.0;
  int warmup = 0;
  int streams = 1;
  std::string streams_note;
  // What a reader needs to weigh the figures ("the exec command runs in its own process: ...").
  std::vector<std::string> notes;
  LatencySummary latency;
  double throughput = 0.0;  // inferences per second
  double wall_seconds = 0.0;
  // Resident memory before loading (what the process held already: convgate, the runtimes'
  // libraries), after loading, and the peak from before loading to the end of the side's
  // measurement (the process's VmHWM, reset before each side); 0 when Linux did not say.
  int64_t rss_before_load_bytes = 0;
  int64_t rss_after_load_bytes = 0;
  int64_t peak_rss_bytes = 0;
  // Every measured latency in the order they finished (report.json keeps up to 10,000, evenly
  // thinned beyond: enough to re-judge and plot).
  std::vector<double> latencies_ms;
};

struct BenchmarkRecord {
  BenchSettings settings;  // as asked
  MachineState machine;
  std::vector<SideBenchmark> sides;
  std::optional<SpeedComparison> speed;  // with two sides
};

// True when a speed gate (--min-speedup, --max-slowdown) failed.
inline bool SpeedGateFailed(const BenchmarkRecord& record) {
  return record.speed.has_value() && !record.speed->passed;
}

// The side called `role`, or null.
const SideBenchmark* FindSide(const BenchmarkRecord& record, const std::string& role);

// A throughput for tables in plain digits: "2.35", "812", "150000" (never "1.5e+05").
std::string FormatThroughput(double per_second);

// The figures of a side in one line: "p50 1.23 ms (1.20-1.25), p99 2.10 ms, 812 inferences/s,
// peak 83.2 MiB".
std::string DescribeSide(const SideBenchmark& side);

}  // namespace convgate::bench
