// What running a model on its data set leaves to report: the side's record (the model or the
// saved outputs, how it loaded and ran), the data set's, each output's sanity, and the stage an
// error stopped at. Plain values; gate's reports (gate/results.h) are made of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/compare/tensor_compare.h"
#include "convgate/core/exit_code.h"
#include "convgate/core/status.h"
#include "convgate/inputs/dataset.h"

namespace convgate::session {

// Where in a workflow an error stopped it. Decides the exit code (see ExitCodeFor).
enum class Stage {
  kFlags,     // a flag or argument is wrong (exit 2)
  kLoad,      // a model or saved-outputs file could not be loaded (exit 3)
  kInputs,    // inputs could not be generated, loaded or do not fit the model (exit 3)
  kRun,       // the runtime failed during inference (exit 3)
  kWrite,     // a result file could not be written (exit 3)
  kConvert,   // the conversion failed (exit 3)
  kInternal,  // a bug in convgate (exit 4)
};
std::string_view StageName(Stage stage);

struct GateError {
  Stage stage = Stage::kInternal;
  Status status;
};

// The exit code of an error at `stage`: usage for kFlags, internal for kInternal (or an Internal
// status anywhere), "cannot run" for the rest.
ExitCode ExitCodeFor(const GateError& error);

// One side of a workflow: a model that ran, or outputs saved earlier.
struct SideRecord {
  std::string role;  // "model", "source", "target"
  std::string path;
  std::string kind;     // "model" or "outputs"
  std::string format;   // "onnx", "npz", "npy", "npy-folder", "onnx-test-case"
  std::string backend;  // "ort", or "outputs" for saved outputs
  std::string backend_version;
  // Runtime settings that can change results (backends::Model::settings): "graph optimization
  // extended" for ort. Empty for backends without any and for saved outputs.
  std::string backend_settings;
  std::string sha256;  // of the file; empty for folders
  double load_seconds = 0.0;
  double run_seconds = 0.0;  // summed over samples
  std::vector<std::string> output_names;
  std::string outputs_saved_to;  // --save-outputs target, if this side's outputs were saved
  // The exec backend: the command template as given (quoted so it splits back into the same
  // argv), and its stderr from the last run, i.e. from the failing run when one failed (the last
  // 64 KiB). Empty for in-process backends.
  std::string backend_command;
  std::string backend_log;
  // compare: how this side's outputs were paired with the other side's: "name", or "position"
  // when its backend names no outputs (TorchScript: output_0, ...) and they took the other side's
  // names in order, listed in output_renames ("output_0 -> logits"). Empty for run.
  std::string output_matching;
  std::vector<std::string> output_renames;
  // Facts about this side a reader needs ("the model declares no outputs: ...").
  std::vector<std::string> notes;
};

struct InputRecord {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;  // of sample 0
};

struct DatasetRecord {
  std::string origin;  // "generated: uniform [0, 1), seed 1" or a file path
  int samples = 0;
  std::vector<InputRecord> tensors;
  std::vector<std::string> notes;       // unbound dims defaulted, dropped extra tensors, ...
  std::string saved_to;                 // --save-inputs target, if any
  std::vector<inputs::DataFile> files;  // --data: the files read, in order (inputs/dataset.h)
};

// `convgate run`: one output of one sample against the end-to-end sanity rules.
struct SanityCheck {
  int sample = 0;
  std::string output;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string declared_dtype;
  std::string declared_shape;
  compare::ValueSummary values;
  int64_t num_elements = 0;
  bool passed = true;
  std::vector<std::string> failures;
};

}  // namespace convgate::session
