// `convgate compare`: both sides on the same samples, every output under the tolerance policy.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "convgate/backends/releasable.h"
#include "convgate/core/join.h"
#include "convgate/core/limits.h"
#include "convgate/core/units.h"
#include "convgate/gate/internal/compare_aggregate.h"
#include "convgate/gate/internal/compare_hints.h"
#include "convgate/gate/internal/compare_judging.h"
#include "convgate/gate/pair_policy.h"
#include "convgate/gate/workflows.h"
#include "convgate/io/npz.h"
#include "convgate/session/data_inputs.h"
#include "convgate/session/hf_inputs.h"
#include "convgate/session/output_saver.h"
#include "convgate/session/positional.h"
#include "convgate/session/save_paths.h"
#include "convgate/session/side.h"
#include "gate/compare_agreement.h"
#include "gate/compare_calibration.h"
#include "gate/per_node/run.h"
#include "gate/per_node/subgraphs.h"

namespace convgate::gate {
namespace {

using session::LoadedModel;
using session::ResolvedSide;
using session::SavedOutputs;
using session::SideKind;

// One side as the workflow holds it: a loaded model or its saved outputs.
struct Side {
  ResolvedSide resolved;
  std::optional<LoadedModel> model;
  std::optional<SavedOutputs> saved;
  SideRecord* record = nullptr;
  // The model's session was deferred (LoadedModel::deferred) and Prepare has not run yet.
  bool deferred = false;

  const Signature* signature() const { return model ? &model->model->signature() : nullptr; }
  // A TorchScript model takes inputs and names outputs by position, and saved outputs may name
  // nothing (side_positional.h).
  bool positional_inputs() const { return model && signature()->positional_inputs; }
  bool positional_outputs() const {
    return (model && signature()->positional_outputs) || (saved && saved->positional);
  }
};

// Whether the two sides may load at once: their files, held about four times over between them
// while both are parsed, fit in an eighth of usable memory. Folders count as small.
bool LoadBothAtOnce(const CompareOptions& options) {
  uint64_t bytes = 0;
  for (const std::string& path : {options.source, options.target}) {
    std::error_code error;
    const uintmax_t size = std::filesystem::file_size(path, error);
    if (!error) bytes += static_cast<uint64_t>(size);
  }
  const int64_t usable = UsableMemoryBytes();
  return usable > 0 && bytes <= static_cast<uint64_t>(usable) / 32;
}

std::optional<GateError> ResolveAndLoad(const std::string& spec, const std::string& backend,
                                        backends::BackendFactory& factory,
                                        const backends::LoadOptions& load, Side& side,
                                        bool defer_session, bool hash) {
  Result<ResolvedSide> resolved = session::ResolveSide(spec, backend);
  if (!resolved.ok()) {
    Stage stage = resolved.status().code() == StatusCode::kNotFound ? Stage::kLoad : Stage::kFlags;
    return GateError{stage, resolved.status().WithContext(side.record->role)};
  }
  side.resolved = std::move(resolved).value();
  session::DescribeSide(side.resolved, *side.record, hash);
  if (side.resolved.kind != SideKind::kModel) return std::nullopt;
  Result<LoadedModel> loaded =
      session::LoadModel(side.resolved, factory, load, *side.record, defer_session);
  if (!loaded.ok()) return GateError{Stage::kLoad, loaded.status().WithContext(side.record->role)};
  side.model = std::move(loaded).value();
  side.deferred = side.model->deferred;
  return std::nullopt;
}

// What a saved-outputs side will hold once read, known before it is: an .npz's declared member
// sizes, an .npy's or a .safetensors' file size (neither is compressed). 0 where that is only known
// by reading (a folder), or where the file cannot be read (LoadSaved reports that).
uint64_t DeclaredSavedBytes(const Side& side) {
  std::error_code error;
  if (side.resolved.format == "npz") {
    Result<uint64_t> bytes = io::NpzDeclaredBytes(side.resolved.path);
    return bytes.ok() ? *bytes : 0;
  }
  // Neither is compressed: the file is what reading it takes (give or take the header).
  if (side.resolved.format == "npy" || side.resolved.format == "safetensors") {
    const uintmax_t bytes = std::filesystem::file_size(side.resolved.path, error);
    return error ? 0 : static_cast<uint64_t>(bytes);
  }
  return 0;
}

// Saved outputs on both sides are held at once, so together they are held to --max-run-bytes,
// before either is read: two 1 GiB archives are each under a 1.5 GiB limit and 2 GiB in all.
// (One side alone is held to it by its reader.)
std::optional<GateError> CheckSavedBytes(const Side& source, const Side& target,
                                         const Limits& limits) {
  if (source.resolved.kind != SideKind::kOutputs || target.resolved.kind != SideKind::kOutputs) {
    return std::nullopt;
  }
  const uint64_t source_bytes = DeclaredSavedBytes(source);
  const uint64_t target_bytes = DeclaredSavedBytes(target);
  uint64_t total = 0;
  if (__builtin_add_overflow(source_bytes, target_bytes, &total)) total = UINT64_MAX;
  if (total <= static_cast<uint64_t>(std::max<int64_t>(limits.max_run_bytes, 0))) {
    return std::nullopt;
  }
  const auto text = [](uint64_t bytes) {
    return FormatBytes(static_cast<int64_t>(std::min<uint64_t>(bytes, INT64_MAX)));
  };
  return GateError{
      Stage::kLoad,
      Status::FailedPrecondition("the saved outputs of both sides declare " + text(total) +
                                 " in all (source " + source.resolved.path.string() + ": " +
                                 text(source_bytes) + ", target " + target.resolved.path.string() +
                                 ": " + text(target_bytes) + "), held at once, over the limit of " +
                                 FormatBytes(limits.max_run_bytes) + " (--max-run-bytes)")};
}

std::optional<GateError> LoadSaved(Side& side, const Signature* other, const Limits& limits) {
  if (side.resolved.kind != SideKind::kOutputs) return std::nullopt;
  Result<SavedOutputs> saved =
      session::LoadSavedOutputs(side.resolved, other, limits, *side.record);
  if (!saved.ok()) return GateError{Stage::kLoad, saved.status().WithContext(side.record->role)};
  side.saved = std::move(saved).value();
  return std::nullopt;
}

// A per-output tolerance naming no output is a typo that would silently not apply.
std::optional<GateError> CheckPolicyNames(const compare::Policy& policy, const Side& source,
                                          const Side& target) {
  auto known = [&](const std::string& name) {
    for (const Side* side : {&source, &target}) {
      for (const std::string& output : side->record->output_names) {
        if (output == name) return true;
      }
    }
    return false;
  };
  for (const std::string& name : policy.NamedOutputs()) {
    if (known(name)) continue;
    return GateError{Stage::kFlags,
                     Status::InvalidArgument("a tolerance names output '" + name +
                                             "', which neither side has (source outputs: " +
                                             JoinComma(source.record->output_names, "none") + ")")};
  }
  return std::nullopt;
}

void CheckStructure(const TensorMap& source, const TensorMap& target, CompareReport& report) {
  if (source.size() != target.size()) {
    report.structure_failures.push_back(
        "output count differs: the source has " + std::to_string(source.size()) + " (" +
        JoinComma(source.Names(), "none") + "), the target has " + std::to_string(target.size()) +
        " (" + JoinComma(target.Names(), "none") + ")");
  }
  for (const auto& entry : target) {
    if (source.Find(entry.name) == nullptr) {
      report.structure_failures.push_back("the target has an output '" + entry.name +
                                          "' that the source lacks");
    }
  }
}

void CompareSample(int sample_idx, const TensorMap& source, const TensorMap& target,
                   CompareReport& report) {
  if (sample_idx == 0) CheckStructure(source, target, report);
  for (const auto& entry : source) {
    const Tensor* other = target.Find(entry.name);
    OutputCheck check =
        internal::CheckOutput(sample_idx, entry.name, entry.tensor, other, report.policy);
    if (other == nullptr) {
      check.failures.push_back("missing: the target has no output '" + entry.name +
                               "' (target outputs: " + JoinComma(target.Names(), "none") + ")");
      check.hints.push_back(
          "if the converter renamed the output, compare saved outputs whose names agree");
    }
    report.checks.push_back(std::move(check));
  }
}

Result<TensorMap> OutputsOf(Side& side, int sample_idx, const TensorMap* sample) {
  if (side.saved.has_value()) {
    return std::move(side.saved->samples[sample_idx]);
  }
  const auto start = std::chrono::steady_clock::now();
  Result<TensorMap> outputs = side.model->model->Run(*sample, {});
  side.record->run_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  session::RecordBackendLog(*side.model, *side.record);
  if (!outputs.ok()) {
    return outputs.status().WithContext(side.record->role + " sample " +
                                        std::to_string(sample_idx));
  }
  return outputs;
}

CompareReport Errored(CompareReport report, GateError error) {
  report.error = std::move(error);
  report.verdict = Verdict::kError;
  return report;
}

// Builds what a deferred side's load left for later; its errors are load errors, as they would
// have been had it loaded at once. The time counts as loading.
std::optional<GateError> PrepareDeferred(Side& side) {
  if (!side.deferred) return std::nullopt;
  side.deferred = false;
  const auto start = std::chrono::steady_clock::now();
  Status prepared = backends::AsReleasable(*side.model->model)->Prepare();
  side.record->load_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!prepared.ok()) return GateError{Stage::kLoad, prepared.WithContext(side.record->role)};
  return std::nullopt;
}

// The source's outputs held while they wait for the target's, in sequential runs
// (SequentialSides): 64 MiB, or an eighth of --max-run-bytes when that is less, since the run's
// memory plan (data_run_bytes.h) counts one sample of each model's outputs. Beyond it the
// remaining samples run both models in turn, as without sequential runs.
int64_t SourceAheadBytes(const Limits& limits) {
  constexpr int64_t kAheadBytes = int64_t{64} << 20;
  return std::min(kAheadBytes, std::max<int64_t>(limits.max_run_bytes, 0) / 8);
}

// Whether the target's session is built only once the source has run: the source is an ONNX
// Runtime model, whose session (weights, arena) ReleasableModel::Release frees, so the two
// sessions are never held at once (a compare of two resnet18s peaked at 202 MiB holding both).
// Other sources keep what they loaded, and the target's session is better built beside their
// load, in parallel.
bool SequentialSides(const CompareOptions& options) {
  Result<ResolvedSide> source = session::ResolveSide(options.source, options.source_backend);
  Result<ResolvedSide> target = session::ResolveSide(options.target, options.target_backend);
  return source.ok() && target.ok() && source->kind == SideKind::kModel &&
         target->kind == SideKind::kModel && source->backend == "ort";
}

// The source's outputs of samples [begin, begin + outputs.size()), run ahead of the target's.
struct SourceAhead {
  std::vector<TensorMap> outputs;
  std::optional<Status> failure;  // the run of the sample after the last held one failed
};

// A side naming outputs by position (TorchScript, numpy's arr_0, a lone .npy) takes the other
// side's names in order; when both do, the target takes the source's (two TorchScript models both
// say output_0, output_1, ... and keep them). Records how each side was matched and any count
// mismatch.
void MatchOutputs(Side& source, Side& target, int sample_idx, TensorMap& source_outputs,
                  TensorMap& target_outputs, CompareReport& report) {
  const bool source_positional = source.positional_outputs();
  const bool target_positional = target.positional_outputs();
  const bool first = sample_idx == 0;
  if (source_positional && target_positional && source_outputs.Names() == target_outputs.Names()) {
    if (first) source.record->output_matching = target.record->output_matching = "position";
  } else if (source_positional || target_positional) {
    const bool rename_source = !target_positional;
    Side& positional = rename_source ? source : target;
    Side& named = rename_source ? target : source;
    std::optional<std::string> failure =
        session::MatchOutputsByPosition(rename_source ? source_outputs : target_outputs,
                                        rename_source ? target_outputs : source_outputs,
                                        *positional.record, named.record->role, first);
    if (failure && first) report.structure_failures.push_back(std::move(*failure));
  }
  // A TorchScript side lists its outputs only once it has run.
  if (source.record->output_names.empty()) source.record->output_names = source_outputs.Names();
  if (target.record->output_names.empty()) target.record->output_names = target_outputs.Names();
}

// Runs the source ahead of the target from the first sample while its outputs stay within `cap`
// bytes (SourceAheadBytes), stopping at the first failed run.
SourceAhead RunSourceAhead(Side& source, const std::optional<inputs::Dataset>& dataset,
                           size_t samples, int64_t cap) {
  SourceAhead ahead;
  for (size_t sample_idx = 0; sample_idx < samples; ++sample_idx) {
    const TensorMap* sample = dataset ? &dataset->samples[sample_idx] : nullptr;
    Result<TensorMap> outputs = OutputsOf(source, static_cast<int>(sample_idx), sample);
    if (!outputs.ok()) {
      ahead.failure = outputs.status();
      break;
    }
    ahead.outputs.push_back(std::move(outputs).value());
    if (session::BytesOf(ahead.outputs) > cap) break;
  }
  return ahead;
}

// One sample from the source's outputs on: the target's run, matching, saving and comparison.
std::optional<GateError> FinishSample(Side& source, Side& target, int sample_idx,
                                      const TensorMap* sample, TensorMap source_outputs,
                                      session::OutputSaver& saver,
                                      internal::AgreementTracker& agreements,
                                      CompareReport& report) {
  Result<TensorMap> target_outputs = OutputsOf(target, sample_idx, sample);
  if (!target_outputs.ok()) return GateError{Stage::kRun, target_outputs.status()};
  MatchOutputs(source, target, sample_idx, source_outputs, *target_outputs, report);
  saver.Keep(source_outputs);
  CompareSample(sample_idx, source_outputs, *target_outputs, report);
  agreements.Add(source_outputs, *target_outputs);
  return std::nullopt;
}

// Whether the source runs ahead of the target (RunSourceAhead): the target's session is not built
// yet and the source's can be released once it has run.
bool RunsAhead(const Side& source, const Side& target) {
  return target.deferred && source.model && backends::AsReleasable(*source.model->model);
}

// Every sample through both sides, in the order and with the errors of running both on each
// sample in turn (source first): the samples the source ran ahead (`ahead`) first, then the rest
// in turn. A source that failed at sample k reports that after the target's samples before k.
// REQUIRES: the target prepared (PrepareDeferred).
std::optional<GateError> RunSamples(Side& source, Side& target,
                                    const std::optional<inputs::Dataset>& dataset, size_t samples,
                                    SourceAhead ahead, session::OutputSaver& saver,
                                    internal::AgreementTracker& agreements, CompareReport& report) {
  size_t next = 0;
  for (; next < ahead.outputs.size(); ++next) {
    const TensorMap* sample = dataset ? &dataset->samples[next] : nullptr;
    if (auto e = FinishSample(source, target, static_cast<int>(next), sample,
                              std::move(ahead.outputs[next]), saver, agreements, report)) {
      return e;
    }
  }
  if (ahead.failure) return GateError{Stage::kRun, *ahead.failure};
  for (size_t sample_idx = next; sample_idx < samples; ++sample_idx) {
    const int idx = static_cast<int>(sample_idx);
    const TensorMap* sample = dataset ? &dataset->samples[sample_idx] : nullptr;
    Result<TensorMap> source_outputs = OutputsOf(source, idx, sample);
    if (!source_outputs.ok()) return GateError{Stage::kRun, source_outputs.status()};
    if (auto e = FinishSample(source, target, idx, sample, std::move(source_outputs).value(), saver,
                              agreements, report)) {
      return e;
    }
  }
  return std::nullopt;
}

// The report a deferred target that fails to build gives: the one loading left (`at_load`), with
// what the target's record gained from a load that, undeferred, would have failed.
void ForgetLoad(SideRecord& record) {
  record.load_seconds = 0;
  record.backend_settings.clear();
  record.output_names.clear();
}

CompareReport TargetLoadFailed(CompareReport at_load, GateError error) {
  ForgetLoad(at_load.target);
  return Errored(std::move(at_load), std::move(error));
}

// A comparison that compared nothing proves nothing: when neither side has a single output (an
// empty .npz, a model without outputs) no check could fail, and a pass would be a lie.
void FailIfNothingCompared(size_t samples, CompareReport& report) {
  if (!report.checks.empty() || !report.structure_failures.empty()) return;
  if (samples == 0) {
    report.structure_failures.push_back("nothing was compared: there are no samples");
    return;
  }
  report.structure_failures.push_back(
      "nothing was compared: neither the source (" + report.source.path + ") nor the target (" +
      report.target.path + ") has any output, so no output could be checked");
}

// A test case saved with --save-outputs alone holds no input_K.pb files: say so rather than let
// the model report its inputs missing.
std::optional<GateError> CheckCarriedInputs(const inputs::Dataset& carried, const Side& saved,
                                            const Side& runner) {
  const bool none = std::all_of(carried.samples.begin(), carried.samples.end(),
                                [](const TensorMap& sample) { return sample.empty(); });
  const size_t wanted = runner.signature()->inputs.size();
  if (!none || wanted == 0) return std::nullopt;
  return GateError{
      Stage::kFlags,
      Status::InvalidArgument(saved.record->role + " " + saved.record->path +
                              " holds saved outputs but no inputs (no input_K.pb files), and the " +
                              runner.record->role + " takes " + std::to_string(wanted) +
                              " input(s): pass the inputs the outputs were computed from with "
                              "--load-inputs")};
}

// What the run holds besides its inputs: each model's outputs of a sample (the source's of every
// sample when --save-outputs keeps them), and the outputs read from files.
session::HeldOutputs HeldBy(const Side& source, const Side& target, const DataOptions& data) {
  session::HeldOutputs held;
  for (const Side* side : {&source, &target}) {
    if (side->model) {
      const bool kept = side == &source && data.save_outputs.has_value();
      held.models.push_back({side->signature(), kept});
    }
    if (side->saved) held.saved_bytes += session::BytesOf(side->saved->samples);
  }
  return held;
}

// Decides the dataset: from the model side(s), a test case, --load-inputs; or none when both
// sides are saved outputs. Returns the sample count.
std::optional<GateError> SetUpSamples(const CompareOptions& options, Side& source, Side& target,
                                      CompareReport& report,
                                      std::optional<inputs::Dataset>& dataset, size_t& samples) {
  // The side that names (and declares) its inputs decides them, the source when both do; a
  // positional side (TorchScript) takes them in that side's order.
  Side* runner = source.model ? &source : (target.model ? &target : nullptr);
  if (runner != nullptr && runner->positional_inputs() && target.model &&
      !target.positional_inputs()) {
    runner = &target;
  }
  if (runner == nullptr) {
    if (options.data.load_inputs.has_value()) {
      return GateError{Stage::kFlags,
                       Status::InvalidArgument("--load-inputs has no effect: both sides are saved "
                                               "outputs, nothing runs")};
    }
    samples = source.saved->samples.size();
    return std::nullopt;
  }
  std::optional<inputs::Dataset> provided;
  for (Side* side : {&source, &target}) {
    if (side->saved && side->saved->inputs && !provided) provided = std::move(side->saved->inputs);
  }
  const bool has_saved = source.saved.has_value() || target.saved.has_value();
  if (has_saved && !provided && !options.data.load_inputs.has_value()) {
    const Side& saved = source.saved ? source : target;
    return GateError{Stage::kFlags,
                     Status::InvalidArgument(
                         saved.record->role + " " + saved.record->path +
                         " holds saved outputs: pass the inputs they were computed from with "
                         "--load-inputs (an ONNX test-case folder carries them itself)")};
  }
  if (provided && !options.data.load_inputs.has_value()) {
    if (auto e = CheckCarriedInputs(*provided, source.saved ? source : target, *runner)) return e;
  }
  if (!provided) {
    Result<std::optional<inputs::Dataset>> made =
        session::HfModelInputs(*runner->record, options.data);
    if (!made.ok()) {
      const bool usage = made.status().code() == StatusCode::kInvalidArgument;
      return GateError{usage ? Stage::kFlags : Stage::kInputs, made.status()};
    }
    provided = std::move(*made);
  }
  std::optional<GateError> error;
  dataset = session::PrepareDataset(options.data, *runner->signature(), std::move(provided),
                                    HeldBy(source, target, options.data), report.inputs, error);
  if (!dataset.has_value()) return error;
  if (source.model && target.model) {
    Side& other = runner == &source ? target : source;
    Status fits =
        other.positional_inputs()
            ? session::CheckPositionalFits(*dataset, *other.signature(), other.record->path)
            : session::CheckDatasetFits(*dataset, *other.signature(), other.record->path);
    if (!fits.ok()) return GateError{Stage::kInputs, fits};
  }
  samples = dataset->samples.size();
  return std::nullopt;
}

std::string Samples(size_t count) {
  return std::to_string(count) + (count == 1 ? " sample" : " samples");
}

std::optional<GateError> CheckSavedCounts(const Side& side, size_t samples) {
  if (!side.saved.has_value() || side.saved->samples.size() == samples) return std::nullopt;
  return GateError{Stage::kInputs, Status::FailedPrecondition(
                                       side.record->role + " " + side.record->path +
                                       " holds outputs of " + Samples(side.saved->samples.size()) +
                                       ", but " + Samples(samples) + " are being compared")};
}

// --per-node needs two models whose backends expose intermediate tensors; checked before any run.
std::optional<GateError> CheckPerNodeSides(const PerNodeOptions& options, const Side& source,
                                           const Side& target) {
  if (!options.enabled) return std::nullopt;
  for (const Side* side : {&source, &target}) {
    if (!side->model) {
      return GateError{Stage::kFlags, Status::InvalidArgument(
                                          "--per-node needs two models: the " + side->record->role +
                                          " " + side->record->path + " holds saved outputs")};
    }
    if (!side->model->backend->SupportsIntermediates()) {
      return GateError{Stage::kFlags,
                       Status::InvalidArgument("--per-node: the " + side->record->role +
                                               " backend '" + side->model->backend->name() +
                                               "' cannot expose intermediate tensors")};
    }
  }
  return std::nullopt;
}

// A calibrated comparison calibrates its intermediates too (per_node.h).
PerNodeOptions PerNodeOptionsOf(const CompareOptions& options) {
  PerNodeOptions per_node = options.per_node;
  per_node.calibrate = per_node.calibrate || options.calibration.enabled;
  return per_node;
}

std::optional<GateError> RunPerNodeStage(const CompareOptions& options, Side& source, Side& target,
                                         const inputs::Dataset& dataset, CompareReport& report) {
  auto side_of = [](Side& side) {
    return internal::PerNodeSide{side.model->backend.get(), side.model->model.get(),
                                 side.resolved.path, side.record->role};
  };
  // Inside If/Loop/Scan bodies too: subgraphs.h.
  Result<PerNodeReport> per_node = internal::RunPerNodeWithSubgraphs(
      side_of(source), session::SideLoadOptions(options.data, options.source_exec), side_of(target),
      session::SideLoadOptions(options.data, options.target_exec), dataset.samples, report.policy,
      PerNodeOptionsOf(options));
  if (!per_node.ok()) return GateError{Stage::kRun, per_node.status().WithContext("--per-node")};
  report.per_node = std::move(per_node).value();
  return std::nullopt;
}

// The source's outputs run ahead (RunSourceAhead) and calibrated against (compare_calibration.h):
// the source's session is let go first when every sample ran ahead and the target's session waits
// for it (RunsAhead), so at most two sessions are ever held.
SourceAhead RunAheadAndCalibrate(const CompareOptions& options, Side& source, const Side& target,
                                 const std::optional<inputs::Dataset>& dataset, size_t samples,
                                 const internal::CalibrationStep& calibration,
                                 CompareReport& report) {
  SourceAhead ahead;
  const bool runs_ahead = RunsAhead(source, target);
  if (!runs_ahead && !calibration.variant) return ahead;
  ahead = RunSourceAhead(source, dataset, samples, SourceAheadBytes(options.data.limits));
  if (runs_ahead && (ahead.failure || ahead.outputs.size() == samples)) {
    backends::AsReleasable(*source.model->model)->Release();
    session::ReleaseFreedMemory();
  }
  if (calibration.variant && !ahead.failure && dataset.has_value()) {
    internal::FinishCalibration(calibration, options, source.resolved, *dataset, ahead.outputs,
                                report);
    session::ReleaseFreedMemory();
  }
  return ahead;
}

// CompareModelsGate with the source's sha256 from the caller's hasher thread.
CompareReport CompareModels(const CompareOptions& options,
                            const std::shared_future<std::string>& source_sha256) {
  CompareReport report;
  report.policy = options.policy;
  report.source.role = "source";
  report.target.role = "target";
  report.source.path = options.source;
  report.target.path = options.target;
  report.source.output_matching = report.target.output_matching = "name";  // see MatchOutputs
  if (auto e = session::CheckSavePaths(
          options.data, {{"the source", options.source}, {"the target", options.target}})) {
    return Errored(std::move(report), *e);
  }
  // A target computing in float16 is judged as one whether or not convgate converted it.
  ApplyPairPolicy(PairFacts{.source = options.source, .target = options.target}, report.policy);
  Side source, target;
  source.record = &report.source;
  target.record = &report.target;
  // The two sides load at once when their files are small next to memory (LoadBothAtOnce): each
  // load is mostly one thread's work (hashing and parsing the file, ONNX Runtime's graph
  // optimisation), so two cores halve the wait. Otherwise the target loads once the source has.
  // Either way the source's error, if any, is the one reported.
  // With sequential sides the target's session is built only once the source has run
  // (RunSamples), or before any later error is reported (`errored`), so that a target that cannot
  // load is still reported ahead of everything after loading.
  const bool defer_target = SequentialSides(options);
  if (defer_target) session::MapLargeBlocksApart();
  std::optional<GateError> target_error;
  const auto load_target = [&] {
    try {
      target_error = ResolveAndLoad(
          options.target, options.target_backend, *options.backend_factory,
          session::SideLoadOptions(options.data, options.target_exec), target, defer_target,
          /*hash=*/true);
    } catch (const std::exception& e) {  // bad_alloc: a thread must not end the process
      target_error =
          GateError{Stage::kLoad, Status::Internal(std::string("the target: ") + e.what())};
    }
  };
  const bool at_once = LoadBothAtOnce(options);
  std::thread target_loader;
  if (at_once) target_loader = std::thread(load_target);
  std::optional<GateError> source_error;
  try {
    source_error =
        ResolveAndLoad(options.source, options.source_backend, *options.backend_factory,
                       session::SideLoadOptions(options.data, options.source_exec), source,
                       /*defer_session=*/false, /*hash=*/false);
  } catch (...) {
    if (target_loader.joinable()) target_loader.join();  // else its destructor ends the process
    throw;
  }
  if (target_loader.joinable()) target_loader.join();
  if (source_error) {
    // The target loaded beside it: its record says what a full load would have said.
    if (PrepareDeferred(target)) ForgetLoad(report.target);
    return Errored(std::move(report), *source_error);
  }
  if (!at_once) load_target();
  if (target_error) return Errored(std::move(report), *target_error);
  // A deferred target is built before any later error is reported: one that cannot load reports
  // what it would have reported at loading, ahead of everything after it.
  const CompareReport at_load = report;
  const auto errored = [&](GateError error) {
    if (auto load_error = PrepareDeferred(target)) return TargetLoadFailed(at_load, *load_error);
    return Errored(std::move(report), std::move(error));
  };
  const Limits& limits = options.data.limits;
  if (auto e = CheckSavedBytes(source, target, limits)) return errored(*e);
  if (auto e = LoadSaved(source, target.signature(), limits)) return errored(*e);
  if (auto e = LoadSaved(target, source.signature(), limits)) return errored(*e);
  if (auto e = CheckPolicyNames(options.policy, source, target)) {
    return errored(*e);
  }
  if (auto e = CheckPerNodeSides(options.per_node, source, target)) {
    return errored(*e);
  }
  internal::AgreementTracker agreements(options.agreement);
  if (auto e = agreements.CheckNames(report.source, report.target)) {
    return errored(*e);
  }
  std::optional<inputs::Dataset> dataset;
  size_t samples = 0;
  if (auto e = SetUpSamples(options, source, target, report, dataset, samples)) {
    return errored(*e);
  }
  for (const Side* side : {&source, &target}) {
    if (auto e = CheckSavedCounts(*side, samples)) return errored(*e);
  }
  session::OutputSaver saver(options.data.save_outputs);
  // Floors only change tolerances nobody set, so they are known before anything is judged.
  const internal::CalibrationStep calibration =
      options.calibration.enabled ? internal::StartCalibration(options, source.resolved, dataset,
                                                               source_sha256.get(), report)
                                  : internal::CalibrationStep{};
  // One session at a time: the source runs ahead and, having run every sample (or failed), lets
  // its session go before the target's is built.
  SourceAhead ahead =
      RunAheadAndCalibrate(options, source, target, dataset, samples, calibration, report);
  if (auto e = PrepareDeferred(target)) return TargetLoadFailed(at_load, *e);
  if (auto e = RunSamples(source, target, dataset, samples, std::move(ahead), saver, agreements,
                          report)) {
    return errored(*e);
  }
  // A positional source's outputs took the target's names: its declared ones no longer apply.
  const Signature* source_signature = source.positional_outputs() ? nullptr : source.signature();
  if (auto e = saver.Write(source_signature ? source_signature->outputs : std::vector<TensorInfo>{},
                           report.source)) {
    return errored(*e);
  }
  FailIfNothingCompared(samples, report);
  if (options.per_node.enabled && dataset.has_value()) {
    if (auto e = RunPerNodeStage(options, source, target, *dataset, report)) {
      return errored(*e);
    }
  }
  internal::WarnAboutConstantOutputs(report);
  internal::AttachHints(report.checks);
  report.aggregates = internal::AggregateBySample(report.checks);
  report.agreements = agreements.Finish();
  const bool per_node_passed = !report.per_node || !report.per_node->gate_failed;
  const bool passed = report.structure_failures.empty() && report.FirstFailure() == nullptr &&
                      report.FirstAgreementFailure() == nullptr && per_node_passed;
  report.verdict = passed ? Verdict::kPass : Verdict::kFail;
  return report;
}

}  // namespace

// The source's file is hashed (for its record's sha256) on a thread of its own, beside the
// source's load instead of before it: hashing resnet18 was a tenth of a compare's wall time, on
// the path every later step waits on. The target's is hashed by the thread that loads it.
// Calibration reads the hash too (its cache key), waiting for the thread only then.
CompareReport CompareModelsGate(const CompareOptions& options) {
  std::promise<std::string> hashed;
  const std::shared_future<std::string> source_sha256 = hashed.get_future().share();
  std::thread hasher([&] {
    std::string sha256;
    try {
      sha256 = session::SideSha256(options.source);
    } catch (const std::exception&) {  // bad_alloc: a thread must not end the process
    }
    hashed.set_value(std::move(sha256));
  });
  CompareReport report;
  try {
    report = CompareModels(options, source_sha256);
  } catch (...) {
    hasher.join();  // else its destructor ends the process
    throw;
  }
  hasher.join();
  if (!report.source.kind.empty()) report.source.sha256 = source_sha256.get();  // described
  return report;
}

}  // namespace convgate::gate
