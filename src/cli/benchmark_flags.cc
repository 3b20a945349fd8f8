// The benchmark group: how long each side is timed, how many requests run at once, where its
// threads run, and the speed gates (gate/bench.h).
#include "cli/flag_groups.h"
#include "convgate/bench/machine.h"
#include "convgate/core/numbers.h"

namespace convgate::cli {
namespace {

// A ratio flag (--min-speedup, --max-slowdown): a positive number.
Flag RatioFlag(std::string name, std::string help, std::vector<std::string> examples,
               std::optional<double>& target) {
  return Flag{.name = std::move(name),
              .value_name = "X",
              .help = std::move(help),
              .examples = std::move(examples),
              .apply = [&target](const std::string& value) -> Status {
                CONVGATE_ASSIGN_OR_RETURN(target, ParseNumber(value, 1e-6, 1e6));
                return Status::OK();
              }};
}

Flag CpusFlag(std::string name, std::string help, std::vector<int>& target) {
  return Flag{.name = std::move(name),
              .value_name = "LIST",
              .help = std::move(help),
              // Not the mask itself: the help (and docs/reference.md) must read the same on
              // every machine.
              .default_text = "every CPU the process may use",
              .examples = {"0-3", "0,2"},
              .apply = [&target](const std::string& value) -> Status {
                CONVGATE_ASSIGN_OR_RETURN(target, bench::ParseCpuList(value));
                return Status::OK();
              }};
}

const char* const kNeedBenchmark[] = {"--warmup",  "--iterations",  "--bench-time",
                                      "--streams", "--min-speedup", "--max-slowdown",
                                      "--cpus",    "--source-cpus", "--target-cpus"};

}  // namespace

void AddBenchmarkFlags(FlagSet& flags, gate::BenchmarkOptions& options, BenchmarkUse use) {
  flags.SetGroup("Benchmark");
  bench::BenchSettings& settings = options.settings;
  if (use == BenchmarkUse::kOptional) {
    flags.Add(SwitchFlag("--benchmark",
                         "After the comparison, time both models on its inputs: load, first "
                         "inference, latency percentiles, throughput and peak memory per side, "
                         "and the speedup with its 95% interval",
                         options.enabled));
  }
  flags.Add({
      IntegerFlag("--warmup", "N", "Runs per side before timing starts (not counted)", {"10"}, 0,
                  1000000, settings.warmup),
      Flag{.name = "--iterations",
           .value_name = "N",
           .help = "Timed runs per side (instead of --bench-time)",
           .default_text = "as many as --bench-time allows",
           .examples = {"200"},
           .apply = [&settings](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(const int64_t n, ParseInteger(value, 1, 100000000));
             settings.iterations = static_cast<int>(n);
             return Status::OK();
           }},
      DurationFlag("--bench-time",
                   "How long each side is timed (at least " +
                       std::to_string(settings.min_iterations) + " runs)",
                   {"10s", "1m"}, settings.seconds),
      IntegerFlag("--streams", "N",
                  "Requests in flight at once, each on its own thread, as benchmark_app's "
                  "throughput mode (ONNX Runtime and OpenVINO, compiled for N streams, run "
                  "them concurrently; other backends one at a time, said in the report)",
                  {"4"}, 1, 256, settings.streams),
      RatioFlag("--min-speedup",
                "Fail (exit 1) unless the target is at least X times faster than the source by "
                "median latency, beyond the measurement's noise",
                {"1.5"}, options.gate.min_speedup),
      RatioFlag("--max-slowdown",
                "Fail (exit 1) when the target is more than X times slower than the source by "
                "median latency, beyond the measurement's noise",
                {"1.1"}, options.gate.max_slowdown),
      CpusFlag("--cpus", "Pin both sides' runtime threads to these CPUs", options.source_cpus),
      CpusFlag("--source-cpus", "Pin the source's (or the one model's) threads",
               options.source_cpus),
      CpusFlag("--target-cpus", "Pin the target's threads", options.target_cpus),
  });
  flags.AddCheck([&options, use](const FlagSet& given) -> Status {
    if (use == BenchmarkUse::kOptional && !given.Given("--benchmark")) {
      for (const char* name : kNeedBenchmark) {
        if (given.Given(name)) {
          return Status::InvalidArgument(std::string(name) + " has no effect without --benchmark");
        }
      }
    }
    if (given.Given("--iterations") && given.Given("--bench-time")) {
      return Status::InvalidArgument(
          "--iterations and --bench-time both say how long to time: "
          "give one");
    }
    if (given.Given("--cpus")) {
      if (given.Given("--source-cpus") || given.Given("--target-cpus")) {
        return Status::InvalidArgument(
            "--cpus pins both sides: give it or --source-cpus/"
            "--target-cpus, not both");
      }
      options.target_cpus = options.source_cpus;
    }
    if (options.settings.iterations == 0 && options.settings.seconds <= 0) {
      return Status::InvalidArgument("--bench-time must be more than 0 s");
    }
    return Status::OK();
  });
}

}  // namespace convgate::cli
