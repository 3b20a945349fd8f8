#include "convgate/bench/speed.h"

#include <algorithm>
#include <cmath>

#include "convgate/bench/latency.h"
#include "convgate/core/numbers.h"
#include "convgate/inputs/prng.h"

namespace convgate::bench {
namespace {

constexpr int kResamples = 1000;
constexpr int kBlocks = 5;
// Resampling more points than this adds no precision worth its time (a 10 s run of a 0.1 ms
// model has 100,000): the series is thinned to every k-th point first.
constexpr size_t kMaxResampled = 4000;

double Median(std::vector<double>& values) {
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  const double upper = *middle;
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), middle);
  return (lower + upper) / 2.0;
}

double ResampledMedian(const std::vector<double>& series, inputs::Prng& prng,
                       std::vector<double>& scratch) {
  scratch.resize(series.size());
  for (double& value : scratch) value = series[prng.NextU64() % series.size()];
  return Median(scratch);
}

// How far apart the medians of consecutive blocks of one run are, as a fraction of the
// smallest: 0 for a series too short to split.
double BlockDrift(const std::vector<double>& series) {
  if (series.size() < static_cast<size_t>(kBlocks) * 4) return 0.0;
  const size_t per_block = series.size() / kBlocks;
  double lowest = 0.0, highest = 0.0;
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<double> block(series.begin() + static_cast<std::ptrdiff_t>(b * per_block),
                              series.begin() + static_cast<std::ptrdiff_t>((b + 1) * per_block));
    const double median = Median(block);
    lowest = b == 0 ? median : std::min(lowest, median);
    highest = b == 0 ? median : std::max(highest, median);
  }
  return lowest > 0.0 ? highest / lowest - 1.0 : 0.0;
}

std::string Times(double ratio) { return FormatSignificant(ratio, 3) + "x"; }

void JudgeGates(SpeedComparison& speed) {
  const std::string measured = "the target is " + DescribeSpeedup(speed);
  if (speed.gate.min_speedup) {
    const double wanted = *speed.gate.min_speedup;
    const std::string rule = "--min-speedup " + FormatShortest(wanted);
    if (speed.speedup_high < wanted) {
      speed.failures.push_back(measured + "; " + rule + " wants " + Times(wanted) + ": short by " +
                               Times(wanted / speed.speedup) +
                               " (beyond the noise: even the interval's top is below it)");
    } else if (speed.speedup < wanted) {
      speed.passes.push_back(measured + "; " + rule + ": below " + Times(wanted) +
                             " but within the measurement's noise, not failed");
    } else {
      speed.passes.push_back(measured + "; " + rule + ": met");
    }
  }
  if (speed.gate.max_slowdown) {
    const double allowed = *speed.gate.max_slowdown;
    const std::string rule = "--max-slowdown " + FormatShortest(allowed);
    // slowdown = 1 / speedup; its interval's bottom is 1 / speedup_high.
    const double slowdown = 1.0 / speed.speedup;
    if (1.0 / speed.speedup_high > allowed) {
      speed.failures.push_back(measured + "; " + rule + " allows " + Times(allowed) +
                               " slower: over by " + Times(slowdown / allowed) +
                               " (beyond the noise: even the interval's bottom is above it)");
    } else if (slowdown > allowed) {
      speed.passes.push_back(measured + "; " + rule + ": over " + Times(allowed) +
                             " slower but within the measurement's noise, not failed");
    } else {
      speed.passes.push_back(measured + "; " + rule + ": met");
    }
  }
  speed.passed = speed.failures.empty();
}

}  // namespace

std::string DescribeSpeedup(const SpeedComparison& speed) {
  const auto interval = [](double low, double high, const char* what) {
    return " (" + Times(low) + "-" + Times(high) + what + ", 95%)";
  };
  if (!speed.beyond_noise) {
    return "as fast within noise: " + Times(speed.speedup) +
           interval(speed.speedup_low, speed.speedup_high, " speedup");
  }
  if (speed.speedup >= 1.0) {
    return Times(speed.speedup) + " faster" + interval(speed.speedup_low, speed.speedup_high, "");
  }
  return Times(1.0 / speed.speedup) + " slower" +
         interval(1.0 / speed.speedup_high, 1.0 / speed.speedup_low, "");
}

SpeedComparison CompareSpeed(const std::vector<double>& source_ms,
                             const std::vector<double>& target_ms, const SpeedGate& gate,
                             unsigned long long seed) {
  SpeedComparison speed;
  speed.gate = gate;
  speed.source_p50_ms = SummarizeLatencies(source_ms).p50_ms;
  speed.target_p50_ms = SummarizeLatencies(target_ms).p50_ms;
  speed.speedup = speed.target_p50_ms > 0 ? speed.source_p50_ms / speed.target_p50_ms : 0.0;

  const std::vector<double> source = ThinSeries(source_ms, kMaxResampled);
  const std::vector<double> target = ThinSeries(target_ms, kMaxResampled);
  inputs::Prng prng(seed);
  std::vector<double> ratios, scratch;
  ratios.reserve(kResamples);
  for (int i = 0; i < kResamples; ++i) {
    const double s = ResampledMedian(source, prng, scratch);
    const double t = ResampledMedian(target, prng, scratch);
    if (t > 0) ratios.push_back(s / t);
  }
  speed.resamples = static_cast<int>(ratios.size());
  if (ratios.empty()) {
    speed.speedup_low = speed.speedup_high = speed.speedup;
  } else {
    std::sort(ratios.begin(), ratios.end());
    speed.speedup_low = PercentileOfSorted(ratios, 2.5);
    speed.speedup_high = PercentileOfSorted(ratios, 97.5);
  }
  speed.block_drift = std::max(BlockDrift(source_ms), BlockDrift(target_ms));
  speed.speedup_low = std::min(speed.speedup_low, speed.speedup) / (1.0 + speed.block_drift);
  speed.speedup_high = std::max(speed.speedup_high, speed.speedup) * (1.0 + speed.block_drift);
  speed.beyond_noise = speed.speedup_low > 1.0 || speed.speedup_high < 1.0;
  JudgeGates(speed);
  return speed;
}

}  // namespace convgate::bench
