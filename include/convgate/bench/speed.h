// The speed verdict: how much faster (or slower) the target runs than the source, with the noise
// of the measurement, and the optional gates on it (--min-speedup, --max-slowdown).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace convgate::bench {

struct SpeedGate {
  // The target must be at least this many times faster than the source (median latency ratio).
  std::optional<double> min_speedup = std::nullopt;
  // The target may be at most this many times slower than the source.
  std::optional<double> max_slowdown = std::nullopt;

  bool any() const { return min_speedup.has_value() || max_slowdown.has_value(); }
};

struct SpeedComparison {
  // The ratio is of median latencies: source p50 / target p50 (> 1: the target is faster).
  double source_p50_ms = 0.0;
  double target_p50_ms = 0.0;
  double speedup = 0.0;
  // The speedup's 95% interval: a bootstrap of both sides' latencies (resampled `resamples`
  // times), widened by the larger drift between consecutive blocks of one side's run (each side
  // measured in 5 blocks: a machine whose speed changed while one side ran shows it there, and
  // the bootstrap alone would miss it).
  double speedup_low = 0.0;
  double speedup_high = 0.0;
  int resamples = 0;
  double block_drift = 0.0;  // the widening, as a fraction (0.03: 3%)
  // The interval excludes 1: the sides' speeds differ beyond the measurement's noise.
  bool beyond_noise = false;
  SpeedGate gate;
  // Each gate's sentence ("the target is 1.12x faster (1.08x-1.16x); --min-speedup 1.5 wants
  // 1.5x: short by 0.34x beyond the noise"); a failure fails the run.
  std::vector<std::string> failures;
  std::vector<std::string> passes;
  bool passed = true;
};

// "1.62x faster (1.55x-1.70x, 95%)", "1.31x slower (1.25x-1.37x, 95%)", or "as fast within
// noise: 1.01x (0.98x-1.03x speedup, 95%)".
std::string DescribeSpeedup(const SpeedComparison& speed);

// Compares two latency series (milliseconds, in the order measured) and judges `gate`: a gate
// fails only when the whole interval is on the wrong side of its threshold. Deterministic for a
// given `seed`. REQUIRES: both series non-empty.
SpeedComparison CompareSpeed(const std::vector<double>& source_ms,
                             const std::vector<double>& target_ms, const SpeedGate& gate,
                             unsigned long long seed = 1);

}  // namespace convgate::bench
