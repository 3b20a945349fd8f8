#include "convgate/core/numbers.h"
#include "convgate/core/units.h"
#include "report/benchmark_report.h"
#include "report/text/table.h"

namespace convgate::report::internal {
namespace {

std::string Ms(double value) { return FormatSignificant(value, 3); }

std::string HowLong(const bench::BenchSettings& settings) {
  if (settings.iterations > 0) return std::to_string(settings.iterations) + " iterations";
  return FormatShortest(settings.seconds) + " s (at least " +
         std::to_string(settings.min_iterations) + " iterations)";
}

// "91.0 MiB (+52.3 MiB)": the process's peak while the side loaded and ran, and how much of it
// the side added to what the process held before loading it.
std::string PeakText(const bench::SideBenchmark& side) {
  if (side.peak_rss_bytes <= 0) return "-";
  std::string text = FormatBytes(side.peak_rss_bytes);
  if (side.rss_before_load_bytes > 0 && side.peak_rss_bytes >= side.rss_before_load_bytes) {
    text += " (+" + FormatBytes(side.peak_rss_bytes - side.rss_before_load_bytes) + ")";
  }
  return text;
}

}  // namespace

std::string BenchmarkSection(const bench::BenchmarkRecord& record, bool color) {
  const bench::MachineState& machine = record.machine;
  std::string out =
      "benchmark: " + std::to_string(record.settings.warmup) + " warm-up, " +
      HowLong(record.settings) + " per side, " + std::to_string(record.settings.streams) +
      " stream(s); load average " + FormatSignificant(machine.load_before, 3) + " -> " +
      FormatSignificant(machine.load_after, 3) + " on " + std::to_string(machine.allowed_cpus) +
      " CPU(s) " + machine.affinity + ", governor " + machine.governor + "\n";
  Table table({"side", "backend", "threads", "load", "first", "p50 ms (95%)", "p90", "p99", "max",
               "mean (95%)", "inf/s", "peak memory (+added)"});
  for (const bench::SideBenchmark& side : record.sides) {
    const bench::LatencySummary& l = side.latency;
    table.AddRow({side.role, side.backend, side.threads, FormatSeconds(side.load_seconds),
                  Ms(side.first_inference_ms) + " ms",
                  Ms(l.p50_ms) + " (" + Ms(l.p50_low_ms) + "-" + Ms(l.p50_high_ms) + ")",
                  Ms(l.p90_ms), Ms(l.p99_ms), Ms(l.max_ms),
                  Ms(l.mean_ms) + " (" + Ms(l.mean_low_ms) + "-" + Ms(l.mean_high_ms) + ")",
                  bench::FormatThroughput(side.throughput), PeakText(side)});
  }
  out += table.Render(color);
  out +=
      "  (each runtime started once before timing: load and memory are the model's, not the "
      "runtime's start-up)\n";
  for (const bench::SideBenchmark& side : record.sides) {
    out += "  " + side.role + ": " + std::to_string(side.latency.count) + " runs in " +
           FormatSeconds(side.wall_seconds) + " on CPUs " + side.affinity +
           (side.settings.empty() ? "" : "; " + side.settings) + "\n";
    if (!side.streams_note.empty()) out += "  note: " + side.streams_note + "\n";
    for (const std::string& note : side.notes) out += "  note: " + note + "\n";
  }
  if (record.speed) {
    out += "speed: the target is " + bench::DescribeSpeedup(*record.speed) + "\n";
    for (const std::string& pass : record.speed->passes) out += "  speed gate: " + pass + "\n";
    for (const std::string& failure : record.speed->failures) {
      out += Paint("  speed gate failed: ", kRed, color) + failure + "\n";
    }
  }
  for (const std::string& warning : machine.warnings) {
    out += Paint("warning: ", kYellow, color) + warning + "\n";
  }
  return out;
}

}  // namespace convgate::report::internal
