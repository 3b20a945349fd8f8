#include "convgate/bench/records.h"

#include "convgate/core/numbers.h"
#include "convgate/core/units.h"

namespace convgate::bench {

const SideBenchmark* FindSide(const BenchmarkRecord& record, const std::string& role) {
  for (const SideBenchmark& side : record.sides) {
    if (side.role == role) return &side;
  }
  return nullptr;
}

std::string FormatThroughput(double per_second) {
  if (per_second >= 1000) return std::to_string(static_cast<int64_t>(per_second + 0.5));
  return FormatSignificant(per_second, 3);
}

std::string DescribeSide(const SideBenchmark& side) {
  const auto ms = [](double value) { return FormatSignificant(value, 3); };
  std::string text = "p50 " + ms(side.latency.p50_ms) + " ms (" + ms(side.latency.p50_low_ms) +
                     "-" + ms(side.latency.p50_high_ms) + "), p99 " + ms(side.latency.p99_ms) +
                     " ms, " + FormatThroughput(side.throughput) + " inferences/s";
  if (side.peak_rss_bytes > 0) text += ", peak " + FormatBytes(side.peak_rss_bytes);
  return text;
}

}  // namespace convgate::bench
