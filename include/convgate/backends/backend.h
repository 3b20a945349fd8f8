// What runs a model. A Backend loads model files into Models; a Model reports its signature and
// runs samples. Implementations live in src/backends/<name>/ and are the only code that includes
// their SDK's headers; their exceptions never escape (they become Status).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "convgate/core/limits.h"
#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::backends {

// How much ONNX Runtime rewrites a graph before running it (its GraphOptimizationLevel).
// kExtended is convgate's default: every fusion ORT makes (Conv+BatchNorm, GELU, attention, ...),
// without the layout pass of kAll, which copies every Conv weight into a blocked (NCHWc) layout.
// That copy changes no result a comparison looks at but doubles a CNN's load time and memory
// (resnet18: 0.16 s and 188 MB at kAll, 0.08 s and 83 MB at kExtended); --ort-optimization all
// runs what ORT's default session runs.
enum class GraphOptimization { kDisabled, kBasic, kExtended, kAll };

// "disabled", "basic", "extended", "all" (inline: backend modules use it without linking the
// registry).
inline const char* GraphOptimizationName(GraphOptimization level) {
  switch (level) {
    case GraphOptimization::kDisabled:
      return "disabled";
    case GraphOptimization::kBasic:
      return "basic";
    case GraphOptimization::kExtended:
      return "extended";
    case GraphOptimization::kAll:
      return "all";
  }
  return "extended";
}

struct LoadOptions {
  // Threads for one inference; 0 lets the runtime choose. Comparisons are deterministic only with
  // a fixed thread count for some kernels, so the CLI passes what the user asked for.
  int intra_op_threads = 0;
  // Threads running independent nodes at once (ONNX Runtime's inter-op pool, used only in its
  // parallel execution mode, which > 1 turns on); 0: the runtime's choice (sequential).
  int inter_op_threads = 0;
  // The "ort" backend's graph optimization level; other backends ignore it.
  GraphOptimization graph_optimization = GraphOptimization::kExtended;
  // The "hf" backend's greedy generation: how many tokens each run generates (--new-tokens).
  int new_tokens = 8;
  // The "hf" backend's text generation (PyTorch and optimum ONNX folders) also returns the prompt
  // forward pass's key/value cache as present.<layer>.key / .value, as Optimum's export
  // validation compares them (--present-key-values; verify --to optimum-onnx sets it).
  bool present_key_values = false;
  // The "exec" backend's command, one argv element per entry (never a shell string), with
  // {model}, {inputs} and {outputs} substituted wherever they appear in an element. Ignored by
  // other backends; the CLI fills it from --exec / --source-exec / --target-exec.
  std::vector<std::string> exec_argv = {};
  // The "exec" backend's wall-clock limit per run of the command, in seconds; <= 0 means none.
  // 600 s matches the conversion timeout: long enough for a large model on a 2-core machine,
  // short enough that a hung runtime does not stall a pipeline for good (--exec-timeout).
  double timeout_seconds = 600.0;
  // run_timeout_seconds bounds each Run of the "ort" backend (its run termination flag; libtorch
  // and OpenCV cannot be interrupted in-process); the "exec" backend holds what its command
  // writes to outputs.npz to max_tensor_bytes and max_run_bytes (core/limits.h).
  Limits limits = {};
  // Requests a benchmark keeps in flight at once (--streams): the "openvino" backend compiles for
  // that many CPU streams (ov::num_streams, as benchmark_app's throughput mode) so concurrent Runs
  // execute side by side; <= 1 is one stream (latency). Other backends ignore it.
  int streams = 0;
};

// Thread safety: callers serialize Run calls on one Model (or load one Model per thread) unless
// the backend documents more (Model::concurrent_runs): the "ort" backend's and the in-process
// "openvino" backend's Models allow concurrent Run calls.
class Model {
 public:
  virtual ~Model() = default;

  // What the model declares (names, dtypes, symbolic shapes), in declaration order. Valid for the
  // Model's lifetime.
  virtual const Signature& signature() const = 0;

  // Runs one sample. `inputs` must hold exactly the declared inputs with their declared dtypes
  // and shapes compatible with the declared ones (FailedPrecondition naming the input otherwise,
  // before the runtime is called). `output_names` empty means all declared outputs, in
  // declaration order; otherwise exactly those, in that order. A name may be any intermediate
  // tensor the backend can expose (see Backend::SupportsIntermediates); an unknown name is
  // NotFound, a repeated one InvalidArgument. Outputs convgate cannot hold (sequences, maps,
  // strings) are Unimplemented naming the output; a failure inside the runtime is Unavailable.
  // Errors name the model path and, where the runtime says, the node.
  virtual Result<TensorMap> Run(const TensorMap& inputs,
                                const std::vector<std::string>& output_names) = 0;

  // What the runtime printed during the last Run, for the report: the "exec" backend keeps its
  // command's stderr (the last 64 KiB), successful or not. Empty for in-process runtimes.
  virtual std::string last_log() const { return {}; }

  // The runtime settings that can change results, for the report ("graph optimization
  // extended"). Empty when the backend has none.
  virtual std::string settings() const { return {}; }

  // Whether Run may be called from several threads at once (a benchmark's --streams): false
  // unless the backend documents it.
  virtual bool concurrent_runs() const { return false; }
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "ort", "torch", "opencv", "exec", "outputs".
  virtual std::string name() const = 0;
  // Runtime version, e.g. "1.29.0".
  virtual std::string version() const = 0;
  virtual bool SupportsIntermediates() const = 0;
  // Whether Load reads an ONNX model's external data (beside the file) itself: per-node
  // validation then hands it cut-out nodes whose weights stay in the model file.
  virtual bool ReadsExternalData() const { return false; }

  // Loads a model file. Errors name the file: NotFound (no such file, or a missing external data
  // file), DataLoss (not parseable), InvalidArgument (a model the runtime rejects),
  // Unimplemented (an op or opset the runtime has no kernel for), Unavailable (anything else).
  virtual Result<std::unique_ptr<Model>> Load(const std::filesystem::path& model_path,
                                              const LoadOptions& options) = 0;
};

}  // namespace convgate::backends
