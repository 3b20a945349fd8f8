#include "convgate/session/side_pair.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <system_error>
#include <utility>

#include "convgate/backends/releasable.h"
#include "convgate/core/join.h"
#include "convgate/core/progress.h"
#include "convgate/core/units.h"
#include "convgate/io/npz.h"
#include "convgate/session/data_inputs.h"
#include "convgate/session/positional.h"
#include "convgate/session/run_bytes.h"
#include "convgate/session/save_paths.h"
#include "session/elapsed.h"

namespace convgate::session {
namespace {

// Whether the two sides may load at once: their files, held about four times over between them
// while both are parsed, fit in an eighth of usable memory. Folders count as small.
bool LoadBothAtOnce(const PairSpec& spec) {
  uint64_t bytes = 0;
  for (const std::string& path : {spec.source, spec.target}) {
    std::error_code error;
    const uintmax_t size = std::filesystem::file_size(path, error);
    if (!error) bytes += static_cast<uint64_t>(size);
  }
  const int64_t usable = UsableMemoryBytes();
  return usable > 0 && bytes <= static_cast<uint64_t>(usable) / 32;
}

// Whether the target's session is built only once the source has run: the source is an ONNX
// Runtime model, whose session (weights, arena) ReleasableModel::Release frees. Other sources
// keep what they loaded, and the target's session is better built beside their load. Decided
// from the paths alone, before either side is opened.
bool SequentialSides(const PairSpec& spec) {
  Result<ResolvedSide> source = ResolveSide(spec.source, spec.source_backend);
  Result<ResolvedSide> target = ResolveSide(spec.target, spec.target_backend);
  return source.ok() && target.ok() && source->kind == SideKind::kModel &&
         target->kind == SideKind::kModel && source->backend == "ort";
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

std::optional<GateError> LoadSavedSide(Side& side, const Signature* other, const Limits& limits) {
  if (side.resolved.kind != SideKind::kOutputs) return std::nullopt;
  Result<SavedOutputs> saved = LoadSavedOutputs(side.resolved, other, limits, *side.record);
  if (!saved.ok()) return GateError{Stage::kLoad, saved.status().WithContext(side.record->role)};
  side.saved = std::move(saved).value();
  return std::nullopt;
}

// Builds what a deferred side's load left for later; its errors are load errors. The time counts
// as loading.
std::optional<GateError> PrepareDeferred(Side& side) {
  if (!side.deferred) return std::nullopt;
  side.deferred = false;
  const auto start = std::chrono::steady_clock::now();
  Status prepared = backends::AsReleasable(*side.model->model)->Prepare();
  side.record->load_seconds += SecondsSince(start);
  if (!prepared.ok()) return GateError{Stage::kLoad, prepared.WithContext(side.record->role)};
  return std::nullopt;
}

// The source's outputs held in memory while they wait for the target's: 64 MiB, or an eighth of
// --max-run-bytes when that is less, since the run's memory plan (run_bytes.h) counts one sample
// of each model's outputs. With streamed samples, 4 MiB: a run over a thousand samples is to hold
// about what a run over one holds (two 256x256 detectors over 200 samples held 51 MiB ahead, 0.7x
// their peak over one sample). Beyond it the rest wait on disk, or run both models in turn.
int64_t SourceAheadBytes(const Limits& limits, bool streamed) {
  const int64_t ahead = int64_t{streamed ? 4 : 64} << 20;
  return std::min(ahead, std::max<int64_t>(limits.max_run_bytes, 0) / 8);
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
HeldOutputs HeldBy(const Side& source, const Side& target, const DataOptions& data) {
  HeldOutputs held;
  for (const Side* side : {&source, &target}) {
    if (side->model) {
      const bool kept = side == &source && SampleSaver::HoldsEverySample(data.save_outputs);
      held.models.push_back({side->signature(), kept});
    }
    if (side->saved) held.saved_bytes += BytesOf(side->saved->samples);
  }
  return held;
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

// The side whose inputs decide the data set: the one that names (and declares) its inputs, the
// source when both do; null when both are saved outputs.
Side* InputsDecidedBy(Side& source, Side& target) {
  Side* runner = source.model ? &source : (target.model ? &target : nullptr);
  if (runner != nullptr && runner->positional_inputs() && target.model &&
      !target.positional_inputs()) {
    runner = &target;
  }
  return runner;
}

}  // namespace

void ForgetLoad(SideRecord& record) {
  record.load_seconds = 0;
  record.backend_settings.clear();
  record.output_names.clear();
}

SidePair::SidePair(PairSpec spec)
    : spec_(std::move(spec)),
      inputs_saver_(SampleSaver::What::kInputs, std::nullopt),
      saver_(SampleSaver::What::kOutputs, spec_.data.save_outputs) {
  sha256_ = hashed_.get_future().share();
  hasher_ = std::thread([this] {
    std::string sha256;
    try {
      sha256 = SideSha256(spec_.source);
    } catch (const std::exception&) {  // bad_alloc: a thread must not end the process
    }
    hashed_.set_value(std::move(sha256));
  });
}

SidePair::~SidePair() {
  if (hasher_.joinable()) hasher_.join();  // else its destructor ends the process
}

std::string SidePair::SourceSha256() { return sha256_.get(); }

SideRequest SidePair::Request(const std::string& path, const std::string& backend,
                              const ExecOptions& exec, bool defer_session, bool hash,
                              const SideRecord& record) const {
  SideRequest request;
  request.spec = path;
  request.backend = backend;
  request.factory = spec_.backend_factory;
  request.load = SideLoadOptions(spec_.data, exec);
  request.defer_session = defer_session;
  request.hash = hash;
  request.context = record.role;
  return request;
}

std::optional<GateError> SidePair::Load(SideRecord& source, SideRecord& target) {
  if (auto e = CheckSavePaths(spec_.data,
                              {{"the source", spec_.source}, {"the target", spec_.target}})) {
    return e;
  }
  source_.record = &source;
  target_.record = &target;
  const bool defer_target = SequentialSides(spec_);
  if (defer_target) MapLargeBlocksApart();
  std::optional<GateError> target_error;
  const auto load_target = [&] {
    try {
      target_error = OpenSide(Request(spec_.target, spec_.target_backend, spec_.target_exec,
                                      defer_target, /*hash=*/true, target),
                              target_);
    } catch (const std::exception& e) {  // bad_alloc: a thread must not end the process
      target_error =
          GateError{Stage::kLoad, Status::Internal(std::string("the target: ") + e.what())};
    }
  };
  const bool at_once = LoadBothAtOnce(spec_);
  std::thread target_loader;
  if (at_once) target_loader = std::thread(load_target);
  std::optional<GateError> source_error;
  try {
    // Hashed by the pair's own thread (SourceSha256).
    source_error = OpenSide(Request(spec_.source, spec_.source_backend, spec_.source_exec,
                                    /*defer_session=*/false, /*hash=*/false, source),
                            source_);
  } catch (...) {
    if (target_loader.joinable()) target_loader.join();  // else its destructor ends the process
    throw;
  }
  if (target_loader.joinable()) target_loader.join();
  if (source_error) {
    // The target loaded beside it: its record says what a full load would have said.
    if (PrepareTarget()) ForgetLoad(target);
    return source_error;
  }
  if (!at_once) load_target();
  if (target_error) return target_error;
  return LoadSaved();
}

std::optional<GateError> SidePair::LoadSaved() {
  const Limits& limits = spec_.data.limits;
  if (auto e = CheckSavedBytes(source_, target_, limits)) return e;
  if (auto e = LoadSavedSide(source_, target_.signature(), limits)) return e;
  return LoadSavedSide(target_, source_.signature(), limits);
}

std::optional<GateError> SidePair::SetUpSamples(DatasetRecord& record) {
  const DataOptions& data = spec_.data;
  dataset_record_ = &record;
  Side* runner = InputsDecidedBy(source_, target_);
  if (runner == nullptr) {
    if (data.inputs_given()) {
      return GateError{
          Stage::kFlags,
          Status::InvalidArgument(std::string(data.load_inputs ? "--load-inputs" : "--data") +
                                  " has no effect: both sides are saved outputs, "
                                  "nothing runs")};
    }
    samples_ = source_.saved->samples.size();
    return CheckSavedCounts(target_, samples_);
  }
  std::optional<inputs::Dataset> provided;
  for (Side* side : {&source_, &target_}) {
    if (side->saved && side->saved->inputs && !provided) provided = std::move(side->saved->inputs);
  }
  const bool has_saved = source_.saved.has_value() || target_.saved.has_value();
  if (has_saved && !provided && !data.inputs_given()) {
    const Side& saved = source_.saved ? source_ : target_;
    return GateError{Stage::kFlags,
                     Status::InvalidArgument(
                         saved.record->role + " " + saved.record->path +
                         " holds saved outputs: pass the inputs they were computed from with "
                         "--load-inputs (an ONNX test-case folder carries them itself)")};
  }
  if (provided && !data.inputs_given()) {
    if (auto e = CheckCarriedInputs(*provided, source_.saved ? source_ : target_, *runner)) {
      return e;
    }
  }
  std::optional<GateError> error;
  dataset_ = PrepareSideDataset(data, *runner->record, *runner->signature(), std::move(provided),
                                HeldBy(source_, target_, data), record, error);
  if (!dataset_.has_value()) return error;
  if (auto e = BindTarget(*runner)) return e;
  samples_ = dataset_->size();
  // A held data set was saved by PrepareDataset; a streamed one is saved as its samples are made.
  inputs_declared_ = runner->signature()->inputs;
  if (dataset_->is_streamed())
    inputs_saver_ = SampleSaver(SampleSaver::What::kInputs, data.save_inputs);
  if (Status saved = SaveMade(0, dataset_->samples.front()); !saved.ok()) {
    return GateError{Stage::kWrite, saved};
  }
  for (const Side* side : {&source_, &target_}) {
    if (auto e = CheckSavedCounts(*side, samples_)) return e;
  }
  return CheckOutputSelection();
}

std::optional<GateError> SidePair::BindTarget(const Side& runner) {
  binding_ = InterfaceBinding::OutputsOnly(spec_.interface);
  if (!source_.model || !target_.model || dataset_->samples.empty()) return std::nullopt;
  Side& other = &runner == &source_ ? target_ : source_;
  if (other.positional_inputs()) {
    Status fits = CheckPositionalFits(*dataset_, *other.signature(), other.record->path);
    if (!fits.ok()) return GateError{Stage::kInputs, fits};
    return std::nullopt;
  }
  if (&other == &source_) {  // a positional source: the target decided the data set
    Status fits = CheckDatasetFits(*dataset_, *other.signature(), other.record->path);
    if (!fits.ok()) return GateError{Stage::kInputs, fits};
    return std::nullopt;
  }
  Result<InterfaceBinding> bound = InterfaceBinding::Bind(
      spec_.interface, dataset_->samples.front(), *target_.signature(), *target_.record);
  if (!bound.ok()) {
    const bool usage = bound.status().code() == StatusCode::kInvalidArgument;
    return GateError{usage ? Stage::kFlags : Stage::kInputs,
                     bound.status().WithContext("the inputs do not fit " + target_.record->path)};
  }
  binding_ = std::move(bound).value();
  if (binding_->identity()) {
    Status fits = CheckDatasetFits(*dataset_, *target_.signature(), target_.record->path);
    if (!fits.ok()) return GateError{Stage::kInputs, fits};
    return std::nullopt;
  }
  // Renamed or transposed: each sample is made for the target when it runs; the first is checked
  // now, so that a dtype it refuses is said before anything runs.
  Result<TensorMap> first = binding_->TargetInputs(dataset_->samples.front());
  if (!first.ok()) return GateError{Stage::kInputs, first.status()};
  inputs::Dataset probe;
  probe.origin = dataset_->origin + " (as the target takes it)";
  probe.samples.push_back(std::move(first).value());
  Status fits = CheckDatasetFits(probe, *target_.signature(), target_.record->path);
  if (!fits.ok()) return GateError{Stage::kInputs, fits};
  return std::nullopt;
}

std::optional<GateError> SidePair::CheckOutputSelection() const {
  Status names =
      binding_->CheckOutputNames(source_.record->output_names, target_.record->output_names);
  if (!names.ok()) return GateError{Stage::kFlags, names};
  return std::nullopt;
}

void SidePair::RecordFiles(const std::vector<inputs::DataFile>& read) {
  if (recorded_files_.empty()) {
    for (const inputs::DataFile& file : dataset_->files)
      recorded_files_.insert({file.input, file.path});
  }
  // A sample made again (run ahead, then for the target) reads its files again: recorded once.
  for (const inputs::DataFile& file : read) {
    if (recorded_files_.insert({file.input, file.path}).second) dataset_->files.push_back(file);
  }
}

Result<const TensorMap*> SidePair::InputsOf(size_t sample) {
  if (sample < dataset_->samples.size()) return &dataset_->samples[sample];
  if (current_index_ != sample) {
    current_ = TensorMap();  // the last sample goes before the next is made
    current_index_ = SIZE_MAX;
    std::vector<inputs::DataFile> read;
    Result<TensorMap> made = dataset_->make(sample, read);
    RecordFiles(read);
    if (!made.ok()) {
      failed_stage_ = Stage::kInputs;  // a file that cannot be read or decoded
      return made.status().WithContext("sample " + std::to_string(sample));
    }
    current_ = std::move(made).value();
    current_index_ = sample;
    if (Status saved = SaveMade(sample, current_); !saved.ok()) {
      failed_stage_ = Stage::kWrite;
      return saved;
    }
  }
  return &current_;
}

Status SidePair::SaveMade(size_t sample, const TensorMap& inputs) {
  // Samples are first made in order: run ahead, or in turn; made again, they are written already.
  if (!inputs_saver_.active() || sample != inputs_saver_.kept()) return Status::OK();
  return inputs_saver_.Keep(inputs, samples_, inputs_declared_);
}

std::optional<GateError> SidePair::FinishSavedInputs() {
  if (!inputs_saver_.active() || inputs_saver_.kept() == 0) return std::nullopt;
  std::string saved_to;
  std::optional<GateError> error = inputs_saver_.Finish(saved_to);
  if (!error && dataset_record_) dataset_record_->saved_to = saved_to;
  return error;
}

Result<TensorMap> SidePair::OutputsOf(Side& side, int sample) {
  if (side.saved.has_value()) return std::move(side.saved->samples[sample]);
  failed_stage_ = Stage::kRun;
  CONVGATE_ASSIGN_OR_RETURN(const TensorMap* inputs, InputsOf(static_cast<size_t>(sample)));
  std::optional<TensorMap> mapped;
  if (&side == &target_ && binding_ && !binding_->identity()) {
    Result<TensorMap> bound = binding_->TargetInputs(*inputs);
    if (!bound.ok()) {
      return bound.status().WithContext(side.record->role + " sample " + std::to_string(sample));
    }
    mapped = std::move(bound).value();
  }
  const auto start = std::chrono::steady_clock::now();
  Result<TensorMap> outputs = side.model->model->Run(mapped ? *mapped : *inputs, {});
  side.record->run_seconds += SecondsSince(start);
  RecordBackendLog(*side.model, *side.record);
  if (!outputs.ok()) {
    return outputs.status().WithContext(side.record->role + " sample " + std::to_string(sample));
  }
  return outputs;
}

bool SidePair::Spool(size_t sample, const TensorMap& outputs) {
  if (!spool_) {
    Result<TempDir> dir = TempDir::Create("ahead");
    if (!dir.ok()) return false;
    spool_ = std::move(dir).value();
    // On disk as in memory, a run's data stays within --max-run-bytes, and it never takes more
    // than half the space left.
    std::error_code error;
    const std::filesystem::space_info space = std::filesystem::space(spool_->path(), error);
    spool_left_ = std::max<int64_t>(spec_.data.limits.max_run_bytes, 0);
    if (!error) {
      spool_left_ = std::min<int64_t>(spool_left_, static_cast<int64_t>(space.available / 2));
    }
  }
  const int64_t bytes = BytesOf(outputs);
  if (bytes > spool_left_) return false;
  spool_left_ -= bytes;
  return io::WriteNpz(SpoolPath(sample), outputs, io::NpzWriteOptions{.sync = false}).ok();
}

std::filesystem::path SidePair::SpoolPath(size_t sample) const {
  return spool_->path() / ("sample_" + std::to_string(sample) + ".npz");
}

Result<TensorMap> SidePair::TakeAhead(size_t sample) {
  if (!spooled_[sample]) return std::move(ahead_[sample]);
  const std::filesystem::path path = SpoolPath(sample);
  Result<TensorMap> outputs = io::ReadNpz(path, spec_.data.limits);
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  if (!outputs.ok()) {
    return outputs.status().WithContext("the source's outputs of sample " + std::to_string(sample) +
                                        ", run ahead onto disk");
  }
  return outputs;
}

const std::vector<TensorMap>& SidePair::RunSourceAhead(bool wanted) {
  // The source runs ahead when the target's session waits for it and the source's can be let go.
  const bool releases =
      target_.deferred && source_.model && backends::AsReleasable(*source_.model->model) != nullptr;
  if (!releases && !wanted) return ahead_;
  const int64_t cap = SourceAheadBytes(spec_.data.limits, dataset_ && dataset_->is_streamed());
  int64_t held = 0;
  for (size_t sample = 0; sample < samples_; ++sample) {
    Result<TensorMap> outputs = OutputsOf(source_, static_cast<int>(sample));
    if (!outputs.ok()) {
      ahead_failure_ = GateError{failed_stage_, outputs.status()};
      break;
    }
    const int64_t sample_bytes = BytesOf(*outputs);
    const bool spilling = !spooled_.empty() && spooled_.back();
    if (!spilling && held + sample_bytes <= cap) {
      held += sample_bytes;
      ahead_.push_back(std::move(outputs).value());
      spooled_.push_back(false);
      continue;
    }
    // Beyond the cap: on disk when that lets the source's session go, else held, and the rest
    // run in turn.
    if (releases && !wanted && Spool(sample, *outputs)) {
      ahead_.emplace_back();
      spooled_.push_back(true);
      continue;
    }
    ahead_.push_back(std::move(outputs).value());
    spooled_.push_back(false);
    break;
  }
  if (releases && (ahead_failure_ || ahead_.size() == samples_)) {
    backends::AsReleasable(*source_.model->model)->Release();
    ReleaseFreedMemory();
  }
  return ahead_;
}

std::optional<GateError> SidePair::PrepareTarget() {
  if (!target_prepared_) {
    target_prepared_ = true;
    target_prepare_error_ = PrepareDeferred(target_);
  }
  return target_prepare_error_;
}

std::optional<std::string> SidePair::MatchOutputs(int sample, TensorMap& source_outputs,
                                                  TensorMap& target_outputs) {
  const bool source_positional = source_.positional_outputs();
  const bool target_positional = target_.positional_outputs();
  const bool first = sample == 0;
  std::optional<std::string> failure;
  if (source_positional && target_positional && source_outputs.Names() == target_outputs.Names()) {
    if (first) source_.record->output_matching = target_.record->output_matching = "position";
  } else if (source_positional || target_positional) {
    const bool rename_source = !target_positional;
    Side& positional = rename_source ? source_ : target_;
    Side& named = rename_source ? target_ : source_;
    failure = MatchOutputsByPosition(rename_source ? source_outputs : target_outputs,
                                     rename_source ? target_outputs : source_outputs,
                                     *positional.record, named.record->role, first);
    if (!first) failure.reset();
  }
  // A TorchScript side lists its outputs only once it has run.
  if (source_.record->output_names.empty()) source_.record->output_names = source_outputs.Names();
  if (target_.record->output_names.empty()) target_.record->output_names = target_outputs.Names();
  return failure;
}

std::optional<GateError> SidePair::FinishSample(int sample, TensorMap source_outputs,
                                                const SampleSink& sink) {
  Result<TensorMap> target_outputs = OutputsOf(target_, sample);
  if (!target_outputs.ok()) return GateError{failed_stage_, target_outputs.status()};
  // Named on both sides: the target's take the source's names (--map, ':0', position).
  if (binding_ && !source_.positional_outputs() && !target_.positional_outputs()) {
    binding_->ToSourceNames(*target_outputs, source_outputs, *target_.record, sample == 0);
  }
  SampleOutputs outputs{sample, source_outputs, *target_outputs,
                        MatchOutputs(sample, source_outputs, *target_outputs)};
  // Every output, whatever this comparison selects. A positional source's outputs took the
  // target's names, so its declared ones no longer apply.
  const Signature* signature = source_.positional_outputs() ? nullptr : source_.signature();
  // --save-outputs keeps the source's outputs as they come; a file that cannot be written stops
  // the comparison (exit 3) rather than leaving a partial save unreported.
  if (Status kept = saver_.Keep(source_outputs, samples_,
                                signature ? signature->outputs : std::vector<TensorInfo>{});
      !kept.ok()) {
    return GateError{Stage::kWrite, kept};
  }
  if (binding_) {
    binding_->Select(source_outputs);
    binding_->Select(*target_outputs);
  }
  return sink(outputs);
}

std::optional<GateError> SidePair::RunSamples(const SampleSink& sink) {
  const auto finish = [&](std::optional<GateError> error) {
    // A streamed data set records the files it read as it made samples.
    if (dataset_ && dataset_->is_streamed() && dataset_record_) {
      dataset_record_->files = dataset_->files;
    }
    spool_.reset();
    if (error) return error;
    if (auto e = FinishSavedInputs()) return e;
    return saver_.Finish(source_.record->outputs_saved_to);  // --save-outputs
  };
  if (auto e = PrepareTarget()) return e;
  ProgressTask progress("comparing samples", static_cast<int64_t>(samples_));
  size_t next = 0;
  for (; next < ahead_.size(); ++next) {
    progress.Advance(static_cast<int64_t>(next));
    Result<TensorMap> source_outputs = TakeAhead(next);
    if (!source_outputs.ok()) return finish(GateError{Stage::kRun, source_outputs.status()});
    if (auto e = FinishSample(static_cast<int>(next), std::move(source_outputs).value(), sink)) {
      return finish(e);
    }
  }
  ahead_.clear();
  spooled_.clear();
  if (ahead_failure_) return finish(*ahead_failure_);
  for (size_t sample = next; sample < samples_; ++sample) {
    progress.Advance(static_cast<int64_t>(sample));
    Result<TensorMap> source_outputs = OutputsOf(source_, static_cast<int>(sample));
    if (!source_outputs.ok()) return finish(GateError{failed_stage_, source_outputs.status()});
    if (auto e = FinishSample(static_cast<int>(sample), std::move(source_outputs).value(), sink)) {
      return finish(e);
    }
  }
  return finish(std::nullopt);
}

}  // namespace convgate::session
