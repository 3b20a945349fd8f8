// What a path on the command line names (a model, or outputs saved earlier), and loading it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/backends/registry.h"
#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/dataset.h"
#include "convgate/session/options.h"
#include "convgate/session/records.h"

namespace convgate::session {

enum class SideKind { kModel, kOutputs };

struct ResolvedSide {
  SideKind kind = SideKind::kModel;
  std::filesystem::path path;
  std::string format;   // "onnx", "npz", "npy", "npy-folder", "onnx-test-case"
  std::string backend;  // model backend name, or "outputs"
};

// Decides from the path alone (no loading). NotFound when the path does not exist;
// InvalidArgument when it exists but is nothing convgate can run or read.
Result<ResolvedSide> ResolveSide(const std::string& spec, const std::string& backend_override);

struct LoadedModel {
  std::unique_ptr<backends::Backend> backend;
  std::unique_ptr<backends::Model> model;
  // Loaded with DeferringBackend::LoadDeferred: the runtime's session is built at
  // ReleasableModel::Prepare.
  bool deferred = false;
};

// Creates the side's backend through `factory` and loads the model with it. Fills
// record.{role-independent fields}: path, kind, format, backend, version, sha256, timing. With
// `defer_session`, a backend that can (backends/releasable.h) leaves its session for later.
Result<LoadedModel> LoadModel(const ResolvedSide& side, backends::BackendFactory& factory,
                              const backends::LoadOptions& options, SideRecord& record,
                              bool defer_session = false);

// How a workflow opens one side (OpenSide): what the path names, on which backend, loaded how.
struct SideRequest {
  std::string spec;     // a model file or folder, or saved outputs
  std::string backend;  // empty: from the format
  backends::BackendFactory* factory = nullptr;
  backends::LoadOptions load;
  // With a backend that can (backends/releasable.h), the model's session is left for later.
  bool defer_session = false;
  bool hash = true;  // the record gets the file's sha256 (DescribeSide)
  // Non-empty: saved outputs are refused, the message ending with this (what needs a model).
  std::string needs_model;
  // Non-empty: errors are prefixed with it ("source: ...").
  std::string context;
};

// Resolves the request's path and fills `record` (DescribeSide), refusing saved outputs when the
// request needs a model. A path that does not exist is a load error, one convgate cannot read a
// usage error. Shared by every workflow, so each side is resolved once, in one way.
Result<ResolvedSide> ResolveForWorkflow(const SideRequest& request, SideRecord& record,
                                        GateError& error);

// The backend's load options for one side of a workflow: the data options' threads and limits,
// and the side's exec command.
backends::LoadOptions SideLoadOptions(const DataOptions& data, const ExecOptions& exec);

// Copies what the side's runtime printed in its last run (the exec backend's stderr tail) into
// record.backend_log. Called after every run, so a failed run's log is the one reported.
void RecordBackendLog(const LoadedModel& model, SideRecord& record);

struct SavedOutputs {
  std::vector<TensorMap> samples;
  std::optional<inputs::Dataset> inputs;  // test-case folders carry the inputs too
  // The file names no outputs: numpy's np.savez(f, a, b) members arr_0, arr_1, ..., or a lone
  // .npy (its tensor is named after the file's stem). Such outputs are matched by position to the
  // other side's (side_positional.h).
  bool positional = false;
};

// One side as a workflow holds it: a loaded model or its saved outputs.
struct Side {
  ResolvedSide resolved;
  std::optional<LoadedModel> model;
  std::optional<SavedOutputs> saved;
  SideRecord* record = nullptr;
  // The model's session was deferred (LoadedModel::deferred) and Prepare has not run yet.
  bool deferred = false;

  const Signature* signature() const { return model ? &model->model->signature() : nullptr; }
  // A TorchScript model takes inputs and names outputs by position, and saved outputs may name
  // nothing (positional.h).
  bool positional_inputs() const { return model && signature()->positional_inputs; }
  bool positional_outputs() const {
    return (model && signature()->positional_outputs) || (saved && saved->positional);
  }
};

// Resolves the request (ResolveForWorkflow) into `side`, whose record must be set, and loads it
// when it is a model (LoadModel); saved outputs are read later (LoadSavedOutputs), once both
// sides are known.
std::optional<GateError> OpenSide(const SideRequest& request, Side& side);

// Reads saved outputs under `limits`. `names` is the other side's signature (output names by
// position for test-case .pb files); may be null.
Result<SavedOutputs> LoadSavedOutputs(const ResolvedSide& side, const Signature* names,
                                      const Limits& limits, SideRecord& record);

// Fills the parts of a SideRecord that do not depend on loading; with `hash`, the file's sha256
// too (SideSha256).
void DescribeSide(const ResolvedSide& side, SideRecord& record, bool hash = true);

// The sha256 a SideRecord gives the side at `path`: the file's, empty for a folder or a file
// that cannot be read.
std::string SideSha256(const std::filesystem::path& path);

// Returns the heap memory freed so far to the system. glibc keeps freed memory for reuse (its mmap
// threshold grows after large frees, so later large blocks land on the heap), so a model's
// session released before the next is built would otherwise still count in the peak RSS.
void ReleaseFreedMemory();

// Has blocks of 1 MiB and more mapped on their own (glibc's M_MMAP_THRESHOLD, fixed), so that
// freeing one gives it back at once. glibc's threshold otherwise grows to the largest block freed
// (up to 32 MiB), after which weights and tensors land on the heap and a model's session freed
// before the next is built leaves its pages there: a compare of two resnet18s, one session at a
// time, peaked at 122 MiB rather than 104. Process-wide; for workflows that load models one after
// another.
void MapLargeBlocksApart();

}  // namespace convgate::session
