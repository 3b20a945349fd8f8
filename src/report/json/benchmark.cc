#include "report/json/benchmark.h"

#include "report/json/codec.h"

namespace convgate::report::internal {
namespace {

template <typename Io, typename Settings>
void SettingsFields(Io& io, Settings& settings) {
  io.Count("warmup", settings.warmup);
  io.Count("iterations", settings.iterations);
  io.Number("seconds", settings.seconds);
  io.Count("min_iterations", settings.min_iterations);
  io.Count("streams", settings.streams);
}

template <typename Io, typename Machine>
void MachineFields(Io& io, Machine& machine) {
  io.Count("online_cpus", machine.online_cpus);
  io.Count("allowed_cpus", machine.allowed_cpus);
  io.Text("affinity", machine.affinity);
  io.Number("load_average_before", machine.load_before);
  io.Number("load_average_after", machine.load_after);
  io.Text("cpu_governor", machine.governor);
  io.Texts("warnings", machine.warnings);
}

template <typename Io, typename Latency>
void LatencyFields(Io& io, Latency& latency) {
  io.Count("count", latency.count);
  io.Number("min_ms", latency.min_ms);
  io.Number("p50_ms", latency.p50_ms);
  io.Number("p90_ms", latency.p90_ms);
  io.Number("p99_ms", latency.p99_ms);
  io.Number("max_ms", latency.max_ms);
  io.Number("mean_ms", latency.mean_ms);
  io.Number("stddev_ms", latency.stddev_ms);
  io.Range("mean_ci95_ms", latency.mean_low_ms, latency.mean_high_ms);
  io.Range("p50_ci95_ms", latency.p50_low_ms, latency.p50_high_ms);
}

template <typename Io, typename Side>
void SideFields(Io& io, Side& side) {
  io.Text("role", side.role);
  io.Text("path", side.path);
  io.Text("backend", side.backend);
  io.Text("settings", side.settings, OrElse(std::string()));
  io.Text("threads", side.threads);
  io.Text("affinity", side.affinity);
  io.Number("load_seconds", side.load_seconds);
  io.Number("first_inference_ms", side.first_inference_ms);
  io.Count("warmup", side.warmup);
  io.Count("streams", side.streams);
  io.Text("streams_note", side.streams_note, Default(std::string()));
  io.Texts("notes", side.notes, Default(std::vector<std::string>{}));
  io.Object("latency", side.latency,
            [](auto& part, auto& latency) { LatencyFields(part, latency); });
  io.Number("throughput_per_second", side.throughput);
  io.Number("wall_seconds", side.wall_seconds);
  io.Count("rss_before_load_bytes", side.rss_before_load_bytes, OrElse<int64_t>(0));
  io.Count("rss_after_load_bytes", side.rss_after_load_bytes);
  io.Count("peak_rss_bytes", side.peak_rss_bytes);
  io.Numbers("latencies_ms", side.latencies_ms);
}

template <typename Io, typename Speed>
void SpeedFields(Io& io, Speed& speed) {
  io.Derived("statistic", "p50");  // the ratio is of median latencies
  io.Number("source_p50_ms", speed.source_p50_ms);
  io.Number("target_p50_ms", speed.target_p50_ms);
  io.Number("speedup", speed.speedup);
  io.Range("speedup_ci95", speed.speedup_low, speed.speedup_high);
  io.Count("resamples", speed.resamples);
  io.Number("block_drift", speed.block_drift);
  io.Bool("beyond_noise", speed.beyond_noise);
  io.OptionalNumber("min_speedup", speed.gate.min_speedup);
  io.OptionalNumber("max_slowdown", speed.gate.max_slowdown);
  io.Bool("passed", speed.passed);
  io.Texts("failures", speed.failures);
  io.Texts("passes", speed.passes);
  if constexpr (!Io::kReading)
    io.Derived("summary", "the target is " + bench::DescribeSpeedup(speed));
}

template <typename Io, typename Record>
void BenchmarkFields(Io& io, Record& record) {
  io.Object("settings", record.settings, [](auto& part, auto& s) { SettingsFields(part, s); });
  io.Object("machine", record.machine, [](auto& part, auto& m) { MachineFields(part, m); });
  io.Objects("sides", record.sides, [](auto& part, auto& side) { SideFields(part, side); });
  io.OptionalObject("speed", record.speed, [](auto& part, auto& s) { SpeedFields(part, s); });
}

}  // namespace

nlohmann::json BenchmarkJson(const bench::BenchmarkRecord& record) {
  return JsonWriter::Write(record, [](auto& io, auto& r) { BenchmarkFields(io, r); });
}

bench::BenchmarkRecord BenchmarkFromJson(const JsonFields& json) {
  return JsonReader::Read<bench::BenchmarkRecord>(
      json, [](auto& io, auto& r) { BenchmarkFields(io, r); });
}

}  // namespace convgate::report::internal
