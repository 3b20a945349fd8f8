// `convgate compare`: both sides on the same samples, every output under the tolerance policy.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "convgate/core/limits.h"
#include "convgate/core/units.h"
#include "convgate/gate/workflows.h"
#include "convgate/io/npz.h"
#include "gate/compare_aggregate.h"
#include "gate/compare_agreement.h"
#include "gate/compare_hints.h"
#include "gate/compare_judging.h"
#include "gate/data_inputs.h"
#include "gate/data_output_saver.h"
#include "gate/data_save_paths.h"
#include "gate/per_node/run.h"
#include "gate/side.h"
#include "gate/side_positional.h"

namespace convgate::gate {
namespace {

using internal::LoadedModel;
using internal::ResolvedSide;
using internal::SavedOutputs;
using internal::SideKind;

// One side as the workflow holds it: a loaded model or its saved outputs.
struct Side {
  ResolvedSide resolved;
  std::optional<LoadedModel> model;
  std::optional<SavedOutputs> saved;
  SideRecord* record = nullptr;

  const Signature* signature() const { return model ? &model->model->signature() : nullptr; }
  // A TorchScript model takes inputs and names outputs by position, and saved outputs may name
  // nothing (side_positional.h).
  bool positional_inputs() const { return model && signature()->positional_inputs; }
  bool positional_outputs() const {
    return (model && signature()->positional_outputs) || (saved && saved->positional);
  }
};

std::string JoinNames(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

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
                                        const backends::LoadOptions& load, Side& side) {
  Result<ResolvedSide> resolved = internal::ResolveSide(spec, backend);
  if (!resolved.ok()) {
    Stage stage = resolved.status().code() == StatusCode::kNotFound ? Stage::kLoad : Stage::kFlags;
    return GateError{stage, resolved.status().WithContext(side.record->role)};
  }
  side.resolved = std::move(resolved).value();
  internal::DescribeSide(side.resolved, *side.record);
  if (side.resolved.kind != SideKind::kModel) return std::nullopt;
  Result<LoadedModel> loaded = internal::LoadModel(side.resolved, factory, load, *side.record);
  if (!loaded.ok()) return GateError{Stage::kLoad, loaded.status().WithContext(side.record->role)};
  side.model = std::move(loaded).value();
  return std::nullopt;
}

// What a saved-outputs side will hold once read, known before it is: an .npz's declared member
// sizes, an .npy's file size (it is not compressed). 0 where that is only known by reading (a
// folder), or where the file cannot be read (LoadSaved reports that).
uint64_t DeclaredSavedBytes(const Side& side) {
  std::error_code error;
  if (side.resolved.format == "npz") {
    Result<uint64_t> bytes = io::NpzDeclaredBytes(side.resolved.path);
    return bytes.ok() ? *bytes : 0;
  }
  if (side.resolved.format == "npy") {
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
      internal::LoadSavedOutputs(side.resolved, other, limits, *side.record);
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
                                             JoinNames(source.record->output_names) + ")")};
  }
  return std::nullopt;
}

void CheckStructure(const TensorMap& source, const TensorMap& target, CompareReport& report) {
  if (source.size() != target.size()) {
    report.structure_failures.push_back(
        "output count differs: the source has " + std::to_string(source.size()) + " (" +
        JoinNames(source.Names()) + "), the target has " + std::to_string(target.size()) + " (" +
        JoinNames(target.Names()) + ")");
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
    OutputCheck check;
    check.sample = sample_idx;
    check.output = entry.name;
    const Tensor* other = target.Find(entry.name);
    check.policy = report.policy.For(entry.name, entry.tensor.dtype(),
                                     other ? std::optional(other->dtype()) : std::nullopt);
    check.tolerance = check.policy.tolerance();
    if (other == nullptr) {
      check.failures.push_back("missing: the target has no output '" + entry.name +
                               "' (target outputs: " + JoinNames(target.Names()) + ")");
      check.hints.push_back(
          "if the converter renamed the output, compare saved outputs whose names agree");
    } else {
      check.comparison = compare::CompareTensors(entry.tensor, *other, check.tolerance);
      internal::JudgeCheck(check, &entry.tensor, other);
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
  internal::RecordBackendLog(*side.model, *side.record);
  if (!outputs.ok()) {
    return outputs.status().WithContext(side.record->role + " sample " +
                                        std::to_string(sample_idx));
  }
  return outputs;
}

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
        internal::MatchOutputsByPosition(rename_source ? source_outputs : target_outputs,
                                         rename_source ? target_outputs : source_outputs,
                                         *positional.record, named.record->role, first);
    if (failure && first) report.structure_failures.push_back(std::move(*failure));
  }
  // A TorchScript side lists its outputs only once it has run.
  if (source.record->output_names.empty()) source.record->output_names = source_outputs.Names();
  if (target.record->output_names.empty()) target.record->output_names = target_outputs.Names();
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

CompareReport Errored(CompareReport report, GateError error) {
  report.error = std::move(error);
  report.verdict = Verdict::kError;
  return report;
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
internal::HeldOutputs HeldBy(const Side& source, const Side& target, const DataOptions& data) {
  internal::HeldOutputs held;
  for (const Side* side : {&source, &target}) {
    if (side->model) {
      const bool kept = side == &source && data.save_outputs.has_value();
      held.models.push_back({side->signature(), kept});
    }
    if (side->saved) held.saved_bytes += internal::BytesOf(side->saved->samples);
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
  std::optional<GateError> error;
  dataset = internal::PrepareDataset(options.data, *runner->signature(), std::move(provided),
                                     HeldBy(source, target, options.data), report.inputs, error);
  if (!dataset.has_value()) return error;
  if (source.model && target.model) {
    Side& other = runner == &source ? target : source;
    Status fits =
        other.positional_inputs()
            ? internal::CheckPositionalFits(*dataset, *other.signature(), other.record->path)
            : internal::CheckDatasetFits(*dataset, *other.signature(), other.record->path);
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

std::optional<GateError> RunPerNodeStage(const CompareOptions& options, Side& source, Side& target,
                                         const inputs::Dataset& dataset, CompareReport& report) {
  auto side_of = [](Side& side) {
    return internal::PerNodeSide{side.model->backend.get(), side.model->model.get(),
                                 side.resolved.path, side.record->role};
  };
  Result<PerNodeReport> per_node =
      internal::RunPerNode(side_of(source), side_of(target),
                           internal::SideLoadOptions(options.data, options.target_exec),
                           dataset.samples, report.policy, options.per_node);
  if (!per_node.ok()) return GateError{Stage::kRun, per_node.status().WithContext("--per-node")};
  report.per_node = std::move(per_node).value();
  return std::nullopt;
}

}  // namespace

CompareReport CompareModelsGate(const CompareOptions& options) {
  CompareReport report;
  report.policy = options.policy;
  report.source.role = "source";
  report.target.role = "target";
  report.source.path = options.source;
  report.target.path = options.target;
  report.source.output_matching = report.target.output_matching = "name";  // see MatchOutputs
  if (auto e = internal::CheckSavePaths(
          options.data, {{"the source", options.source}, {"the target", options.target}})) {
    return Errored(std::move(report), *e);
  }
  Side source, target;
  source.record = &report.source;
  target.record = &report.target;
  // The two sides load at once when their files are small next to memory (LoadBothAtOnce): each
  // load is mostly one thread's work (hashing and parsing the file, ONNX Runtime's graph
  // optimisation), so two cores halve the wait. Otherwise the target loads once the source has.
  // Either way the source's error, if any, is the one reported.
  std::optional<GateError> target_error;
  const auto load_target = [&] {
    try {
      target_error =
          ResolveAndLoad(options.target, options.target_backend, *options.backend_factory,
                         internal::SideLoadOptions(options.data, options.target_exec), target);
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
                       internal::SideLoadOptions(options.data, options.source_exec), source);
  } catch (...) {
    if (target_loader.joinable()) target_loader.join();  // else its destructor ends the process
    throw;
  }
  if (target_loader.joinable()) target_loader.join();
  if (source_error) return Errored(std::move(report), *source_error);
  if (!at_once) load_target();
  if (target_error) return Errored(std::move(report), *target_error);
  const Limits& limits = options.data.limits;
  if (auto e = CheckSavedBytes(source, target, limits)) return Errored(std::move(report), *e);
  if (auto e = LoadSaved(source, target.signature(), limits)) return Errored(std::move(report), *e);
  if (auto e = LoadSaved(target, source.signature(), limits)) return Errored(std::move(report), *e);
  if (auto e = CheckPolicyNames(options.policy, source, target)) {
    return Errored(std::move(report), *e);
  }
  if (auto e = CheckPerNodeSides(options.per_node, source, target)) {
    return Errored(std::move(report), *e);
  }
  internal::AgreementTracker agreements(options.agreement);
  if (auto e = agreements.CheckNames(report.source, report.target)) {
    return Errored(std::move(report), *e);
  }
  std::optional<inputs::Dataset> dataset;
  size_t samples = 0;
  if (auto e = SetUpSamples(options, source, target, report, dataset, samples)) {
    return Errored(std::move(report), *e);
  }
  for (const Side* side : {&source, &target}) {
    if (auto e = CheckSavedCounts(*side, samples)) return Errored(std::move(report), *e);
  }
  internal::OutputSaver saver(options.data.save_outputs);
  for (size_t sample_idx = 0; sample_idx < samples; ++sample_idx) {
    const int idx = static_cast<int>(sample_idx);
    const TensorMap* sample = dataset ? &dataset->samples[sample_idx] : nullptr;
    Result<TensorMap> source_outputs = OutputsOf(source, idx, sample);
    if (!source_outputs.ok()) {
      return Errored(std::move(report), GateError{Stage::kRun, source_outputs.status()});
    }
    Result<TensorMap> target_outputs = OutputsOf(target, idx, sample);
    if (!target_outputs.ok()) {
      return Errored(std::move(report), GateError{Stage::kRun, target_outputs.status()});
    }
    MatchOutputs(source, target, idx, *source_outputs, *target_outputs, report);
    saver.Keep(*source_outputs);
    CompareSample(idx, *source_outputs, *target_outputs, report);
    agreements.Add(*source_outputs, *target_outputs);
  }
  // A positional source's outputs took the target's names: its declared ones no longer apply.
  const Signature* source_signature = source.positional_outputs() ? nullptr : source.signature();
  if (auto e = saver.Write(source_signature ? source_signature->outputs : std::vector<TensorInfo>{},
                           report.source)) {
    return Errored(std::move(report), *e);
  }
  FailIfNothingCompared(samples, report);
  if (options.per_node.enabled && dataset.has_value()) {
    if (auto e = RunPerNodeStage(options, source, target, *dataset, report)) {
      return Errored(std::move(report), *e);
    }
  }
  internal::AttachHints(report.checks);
  report.aggregates = internal::AggregateBySample(report.checks);
  report.agreements = agreements.Finish();
  const bool per_node_passed = !report.per_node || !report.per_node->gate_failed;
  const bool passed = report.structure_failures.empty() && report.FirstFailure() == nullptr &&
                      report.FirstAgreementFailure() == nullptr && per_node_passed;
  report.verdict = passed ? Verdict::kPass : Verdict::kFail;
  return report;
}

}  // namespace convgate::gate
