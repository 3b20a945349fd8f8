// The two sides of a comparison, run on the same samples within the run's limits. A SidePair
// owns the scheduling so that a workflow reads as its steps (load, check, set up samples, run,
// judge): which side loads when, whose session is built when, what runs ahead, what is let go.
//
//   - Loading: both sides at once when their files are small next to memory (each load is mostly
//     one thread's work, so two cores halve the wait), else in turn. The source's file is hashed
//     on a thread of its own beside its load (hashing resnet18 was a tenth of a compare).
//   - Sessions: with an ONNX Runtime source (backends/releasable.h), the target's session is
//     built only once the source has run and let its own go, so two sessions are never held at
//     once (two resnet18s peaked at 202 MiB holding both, 104 MiB in turn).
//   - Running: the source runs ahead of the target while its outputs stay within a cap, and beyond
//     it, when that lets the source's session go, on every sample with the rest of its outputs
//     waiting on disk; otherwise the rest run both sides on each sample in turn, with the errors of
//     that order.
//   - Samples: with DataOptions::stream, generated and --data samples are made one at a time
//     (inputs::Dataset::make), so a run over thousands of samples holds about one.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "convgate/backends/registry.h"
#include "convgate/core/limits.h"
#include "convgate/core/temp_dir.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/dataset.h"
#include "convgate/session/interface.h"
#include "convgate/session/options.h"
#include "convgate/session/records.h"
#include "convgate/session/sample_saver.h"
#include "convgate/session/side.h"

namespace convgate::session {

// What the two sides are and what they run on.
struct PairSpec {
  std::string source;  // a model file, or saved outputs: .npz, .npy, an ONNX test-case folder
  std::string target;
  std::string source_backend;  // empty: from the format
  std::string target_backend;
  ExecOptions source_exec;
  ExecOptions target_exec;
  DataOptions data;
  // --map, --target-layout, --outputs, --exclude-outputs: how the target's inputs and outputs
  // correspond to the source's (session/interface.h).
  InterfaceOptions interface;
  // Where both sides' backends come from (LevelDB's Options::env): the backends of this build, or
  // a fake in tests; verify and reduce load every model through this one too. Not owned; must
  // outlive the pair.
  backends::BackendFactory* backend_factory = backends::BackendFactory::Default();
};

// Clears what a side's record gained from a load that did not finish (its session failed to
// build): the record says what a load failing at once would have said.
void ForgetLoad(SideRecord& record);

class SidePair {
 public:
  // Starts hashing the source's file (SourceSha256).
  explicit SidePair(PairSpec spec);
  ~SidePair();  // waits for the hashing thread
  SidePair(const SidePair&) = delete;
  SidePair& operator=(const SidePair&) = delete;

  // Refuses --save-inputs/--save-outputs paths that would overwrite a side (session/save_paths.h);
  // resolves and loads both sides into `source` and `target` (which must outlive the pair), then
  // reads the saved outputs of the sides that are saved outputs, held together to
  // --max-run-bytes before either is read. The source's error, if any, is the one returned; a
  // target loaded beside a failing source has its record say what a full load would have said.
  std::optional<GateError> Load(SideRecord& source, SideRecord& target);
  // Decides the data set (written to `record`): from a model side (the source when both name
  // their inputs), a test case, --load-inputs or --data, or none when both sides are saved
  // outputs; binds it to the other model (session/interface.h: renamed, transposed) and checks it
  // fits; checks that saved outputs hold as many samples and that --outputs names outputs.
  std::optional<GateError> SetUpSamples(DatasetRecord& record);

  Side& source() { return source_; }
  Side& target() { return target_; }
  const Side& source() const { return source_; }
  const Side& target() const { return target_; }
  const std::optional<inputs::Dataset>& dataset() const { return dataset_; }
  // Whether the target takes the data set's inputs as they are: not renamed or transposed
  // (session/interface.h). REQUIRES: SetUpSamples.
  bool target_takes_inputs_as_they_are() const { return !binding_ || binding_->identity(); }
  // The binding of the data set to the target; nullptr before SetUpSamples or for saved outputs.
  const InterfaceBinding* binding() const { return binding_ ? &*binding_ : nullptr; }
  size_t samples() const { return samples_; }

  // Runs the source ahead of the target (when the target's session waits for it, or `wanted`:
  // calibration reads the outputs), then lets the source's session go once every sample ran ahead
  // or one failed. Returns the outputs held, of samples [0, size); empty after a failed run. When
  // `wanted`, none wait on disk.
  const std::vector<TensorMap>& RunSourceAhead(bool wanted);
  // Whether a run of the source ahead failed (RunSamples reports it in its place).
  bool ahead_failed() const { return ahead_failure_.has_value(); }
  // Builds the target's deferred session, if any, once; its errors are load errors, as they would
  // have been had it loaded at once, and every later call returns the same. Called before any
  // later error is reported, so that a target that cannot load says so ahead of everything after
  // loading (RunSamples calls it first).
  std::optional<GateError> PrepareTarget();

  // Both sides' outputs of one sample. A side naming its outputs by position (TorchScript,
  // numpy's arr_0, a lone .npy) has taken the other side's names in order (when both do, the
  // target took the source's); `mismatch` is a count mismatch that matching found (sample 0 only).
  struct SampleOutputs {
    int sample;
    TensorMap& source;
    TensorMap& target;
    std::optional<std::string> mismatch;
  };
  using SampleSink = std::function<std::optional<GateError>(SampleOutputs& outputs)>;
  // Every sample through both sides, in the order and with the errors of running both on each
  // sample in turn (source first): the samples the source ran ahead first, then the rest in turn.
  // Records how each side's outputs were matched; with --save-outputs, writes the source's (as
  // matched: a positional source's outputs took the target's names) and records where in the
  // source's record. A run's error is Stage::kRun; the sink's are returned as they are; the
  // target's deferred session is built first (PrepareTarget).
  std::optional<GateError> RunSamples(const SampleSink& sink);

  // The source file's sha256 (SideSha256), waiting for the hashing thread.
  std::string SourceSha256();

 private:
  SideRequest Request(const std::string& path, const std::string& backend, const ExecOptions& exec,
                      bool defer_session, bool hash, const SideRecord& record) const;
  Result<TensorMap> OutputsOf(Side& side, int sample);
  // The inputs of `sample` as the data set holds or makes them (valid until the next call).
  Result<const TensorMap*> InputsOf(size_t sample);
  // Adds the files a streamed sample read to the data set's, each (input, path) once.
  void RecordFiles(const std::vector<inputs::DataFile>& read);
  // --save-inputs of a streamed data set: SaveMade writes a sample made for the first time
  // (sample 0 by SetUpSamples); FinishSavedInputs closes the file and records it once every
  // sample was written.
  Status SaveMade(size_t sample, const TensorMap& inputs);
  std::optional<GateError> FinishSavedInputs();
  // Puts the source's outputs of `sample` (the next after ahead_) on disk; false when they cannot
  // be written there (they are then held).
  bool Spool(size_t sample, const TensorMap& outputs);
  Result<TensorMap> TakeAhead(size_t sample);
  std::filesystem::path SpoolPath(size_t sample) const;
  std::optional<std::string> MatchOutputs(int sample, TensorMap& source, TensorMap& target);
  std::optional<GateError> BindTarget(const Side& runner);
  std::optional<GateError> CheckOutputSelection() const;
  std::optional<GateError> LoadSaved();
  std::optional<GateError> FinishSample(int sample, TensorMap source_outputs,
                                        const SampleSink& sink);

  PairSpec spec_;
  Side source_, target_;
  std::optional<inputs::Dataset> dataset_;
  size_t samples_ = 0;
  DatasetRecord* dataset_record_ = nullptr;  // set by SetUpSamples
  // A streamed data set's sample made last (InputsOf), and its index.
  TensorMap current_;
  std::set<std::pair<std::string, std::string>> recorded_files_;
  // --save-inputs of a streamed data set: each sample written the first time it is made.
  SampleSaver inputs_saver_;
  std::vector<TensorInfo> inputs_declared_;  // the order of a test case's input_K.pb files
  size_t current_index_ = SIZE_MAX;
  std::vector<TensorMap> ahead_;  // the source's outputs of samples [0, ahead_.size())
  std::vector<bool> spooled_;     // ahead_[i] waits on disk, in spool_
  std::optional<TempDir> spool_;
  int64_t spool_left_ = 0;                  // the bytes the spool may still take
  std::optional<GateError> ahead_failure_;  // the run of the sample after the last held one failed
  Stage failed_stage_ = Stage::kRun;  // of OutputsOf's last error: kInputs when making the sample
  SampleSaver saver_;                 // the source's outputs, for --save-outputs
  bool target_prepared_ = false;      // PrepareTarget ran; its error, if any:
  std::optional<GateError> target_prepare_error_;
  // How the target takes the data set and names its outputs; set by SetUpSamples.
  std::optional<InterfaceBinding> binding_;
  std::promise<std::string> hashed_;
  std::shared_future<std::string> sha256_;
  std::thread hasher_;
};

}  // namespace convgate::session
