// `convgate bench`: each side loaded, timed and released in turn, then the speed verdict.
#include <chrono>
#include <set>

#include "convgate/bench/machine.h"
#include "convgate/gate/bench.h"
#include "convgate/session/data_inputs.h"
#include "convgate/session/side.h"

namespace convgate::gate {
namespace {

using session::ExecOptions;

// report.json keeps at most this many latencies per side, evenly thinned beyond.
constexpr size_t kMaxKeptLatencies = 10000;

struct SideSpec {
  std::string role;
  std::string path;
  std::string backend;
  const ExecOptions* exec = nullptr;
  const std::vector<int>* cpus = nullptr;
};

std::string ThreadsText(const backends::LoadOptions& load) {
  if (load.intra_op_threads > 0) return std::to_string(load.intra_op_threads) + " (set)";
  return "runtime default";
}

// Whether `signature` takes the samples of `dataset` as they are: it declares no inputs (an exec
// command's model, TorchScript) or every input it declares is in them by name.
bool TakesSamples(const Signature& signature, const inputs::Dataset& dataset) {
  if (dataset.samples.empty()) return false;
  for (const TensorInfo& input : signature.inputs) {
    if (dataset.samples.front().Find(input.name) == nullptr) return false;
  }
  return true;
}

// Loads, measures and releases one side into `record` (path, backend, load time) and `out`;
// `inputs`, when not null, gets the data set's record. `given`: samples to run (a pipeline
// node's, or the source's for the target, when the side takes them); null: made for the side's
// signature. `kept`, when not null, gets the samples the side ran (the source's, for the target).
std::optional<GateError> MeasureSide(const SideSpec& spec, const session::PairSpec& pair,
                                     const bench::BenchSettings& settings,
                                     const inputs::Dataset* given, SideRecord& record,
                                     DatasetRecord* inputs, bench::SideBenchmark& out,
                                     std::vector<double>& latencies,
                                     std::optional<inputs::Dataset>* kept) {
  record.role = spec.role;
  record.path = spec.path;
  session::SideRequest request;  // loaded below, once the memory before loading is measured
  request.spec = spec.path;
  request.backend = spec.backend;
  request.needs_model = "not a model: a benchmark runs models (e.g. .onnx)";
  GateError resolve_error;
  Result<session::ResolvedSide> side = session::ResolveForWorkflow(request, record, resolve_error);
  if (!side.ok()) return resolve_error;
  Result<bench::ScopedAffinity> pinned = bench::ScopedAffinity::Pin(*spec.cpus);
  if (!pinned.ok()) return GateError{Stage::kFlags, pinned.status()};
  session::ReleaseFreedMemory();
  out.rss_before_load_bytes = bench::CurrentRssBytes();
  bench::ResetPeakRss();
  backends::LoadOptions load = session::SideLoadOptions(pair.data, *spec.exec);
  load.streams = settings.streams;
  std::optional<GateError> error;
  {
    Result<session::LoadedModel> loaded =
        session::LoadModel(*side, *pair.backend_factory, load, record);
    if (!loaded.ok()) return GateError{Stage::kLoad, loaded.status()};
    out.rss_after_load_bytes = bench::CurrentRssBytes();
    backends::Model& model = *loaded->model;

    session::DataOptions data = session::ForModel(pair.data, spec.path);
    data.stream = false;
    DatasetRecord scratch;
    std::optional<inputs::Dataset> dataset = session::PrepareDataset(
        data, model.signature(),
        given != nullptr && TakesSamples(model.signature(), *given)
            ? std::optional<inputs::Dataset>(given->Clone())
            : std::nullopt,
        session::HeldOutputs{}, inputs != nullptr ? *inputs : scratch, error);
    if (!dataset) return error;
    if (dataset->samples.empty()) {
      return GateError{Stage::kInputs,
                       Status::InvalidArgument("no samples to run " + spec.path + " on")};
    }
    Result<bench::Measurement> measured = bench::Measure(
        model, [&](size_t i) -> const TensorMap& { return dataset->samples[i]; },
        dataset->samples.size(), settings, side->backend);
    session::RecordBackendLog(*loaded, record);
    if (!measured.ok()) return GateError{Stage::kRun, measured.status().WithContext(spec.path)};
    out.peak_rss_bytes = bench::PeakRssBytes();
    out.first_inference_ms = measured->first_inference_ms;
    out.warmup = measured->warmup;
    out.streams = measured->streams;
    out.streams_note = measured->streams_note;
    out.throughput = measured->throughput;
    out.wall_seconds = measured->wall_seconds;
    out.latency = bench::SummarizeLatencies(measured->latencies_ms);
    latencies = std::move(measured->latencies_ms);
    out.latencies_ms = bench::ThinSeries(latencies, kMaxKeptLatencies);
    if (kept != nullptr) *kept = std::move(*dataset);  // done with them: no copy
  }
  session::ReleaseFreedMemory();
  out.role = spec.role;
  out.path = spec.path;
  out.backend = record.backend;
  out.settings = record.backend_settings;
  out.load_seconds = record.load_seconds;
  out.threads = ThreadsText(load);
  if (record.backend == "exec") {
    out.notes.push_back(
        "the exec command runs in its own process: its memory is not in these figures, and each "
        "latency includes handing the sample over and reading its outputs back through files");
  }
  out.affinity = bench::AffinityText();
  if (!spec.cpus->empty()) {
    // The pin is still in place here: the mask read is the side's.
    out.affinity += " (pinned)";
  }
  return std::nullopt;
}

// Starts each side's runtime once before anything is timed: a throwaway load of the side's model
// on its backend (the first of each backend only). The first load in a process also pays the
// runtime's own start-up (ONNX Runtime's environment, the pages of its library read in: ~20 ms
// and ~20 MiB here), which would otherwise count as the first side's load time and memory and
// none of the second's. A side that cannot load is left for its measurement to report.
void StartRuntimes(const std::vector<const SideSpec*>& sides, const session::PairSpec& pair) {
  std::set<std::string> started;
  for (const SideSpec* spec : sides) {
    Result<session::ResolvedSide> side = session::ResolveSide(spec->path, spec->backend);
    if (!side.ok() || side->kind != session::SideKind::kModel) continue;
    if (!started.insert(side->backend).second) continue;
    SideRecord scratch;
    (void)session::LoadModel(*side, *pair.backend_factory,
                             session::SideLoadOptions(pair.data, *spec->exec), scratch);
  }
  session::ReleaseFreedMemory();
}

int BusiestThreads(const bench::BenchmarkRecord& record, const session::PairSpec& pair) {
  int busiest = 0;
  for (const bench::SideBenchmark& side : record.sides) {
    const ExecOptions& exec = side.role == "target" ? pair.target_exec : pair.source_exec;
    const int threads = exec.threads.value_or(pair.data.threads);
    if (threads > 0) busiest = std::max(busiest, threads * side.streams);
  }
  return busiest;
}

// Measures the sides of `pair` in turn into `record`; with two, judges the speed.
std::optional<GateError> MeasureSides(const session::PairSpec& pair,
                                      const BenchmarkOptions& options, bool two_sides,
                                      SideRecord& source, std::optional<SideRecord>& target,
                                      DatasetRecord& inputs, bench::BenchmarkRecord& record,
                                      const inputs::Dataset* given) {
  record.settings = options.settings;
  record.machine = bench::ReadMachineState();
  const SideSpec source_spec{two_sides ? "source" : "model", pair.source, pair.source_backend,
                             &pair.source_exec, &options.source_cpus};
  const SideSpec target_spec{"target", pair.target, pair.target_backend, &pair.target_exec,
                             &options.target_cpus};
  StartRuntimes(two_sides ? std::vector<const SideSpec*>{&source_spec, &target_spec}
                          : std::vector<const SideSpec*>{&source_spec},
                pair);
  std::vector<double> source_ms, target_ms;
  bench::SideBenchmark& first = record.sides.emplace_back();
  // The target runs the source's samples where it takes them (as a comparison does), so both
  // sides are timed on the same values.
  std::optional<inputs::Dataset> source_samples;
  if (auto e = MeasureSide(source_spec, pair, options.settings, given, source, &inputs, first,
                           source_ms, two_sides ? &source_samples : nullptr)) {
    record.sides.pop_back();
    return e;
  }
  if (two_sides) {
    target.emplace();
    bench::SideBenchmark& second = record.sides.emplace_back();
    const inputs::Dataset* samples = source_samples ? &*source_samples : given;
    if (auto e = MeasureSide(target_spec, pair, options.settings, samples, *target, nullptr, second,
                             target_ms, nullptr)) {
      record.sides.pop_back();
      return e;
    }
    record.speed = bench::CompareSpeed(source_ms, target_ms, options.gate);
  }
  bench::FinishMachineState(record.machine, BusiestThreads(record, pair));
  return std::nullopt;
}

}  // namespace

BenchReport BenchGate(const BenchOptions& options) {
  BenchReport report;
  report.source.role = options.target.empty() ? "model" : "source";
  report.source.path = options.source;
  if (options.benchmark.gate.any() && options.target.empty()) {
    report.error =
        GateError{Stage::kFlags, Status::InvalidArgument("--min-speedup and --max-slowdown compare "
                                                         "two models: give MODEL and TARGET")};
    return report;
  }
  report.error = MeasureSides(options, options.benchmark, !options.target.empty(), report.source,
                              report.target, report.inputs, report.benchmark, nullptr);
  if (report.error) return report;
  if (report.benchmark.speed) report.failures = report.benchmark.speed->failures;
  report.verdict = report.failures.empty() ? Verdict::kPass : Verdict::kFail;
  return report;
}

std::optional<GateError> BenchmarkPair(const session::PairSpec& spec,
                                       const BenchmarkOptions& options,
                                       bench::BenchmarkRecord& record,
                                       const inputs::Dataset* given) {
  SideRecord source;
  std::optional<SideRecord> target;
  DatasetRecord inputs;
  return MeasureSides(spec, options, true, source, target, inputs, record, given);
}

}  // namespace convgate::gate
