// What a session runs a model on and within: the data set's options (generated or loaded inputs,
// what is saved, threads, limits) and the exec backend's command for one side.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/core/limits.h"
#include "convgate/inputs/input_options.h"
#include "convgate/loaders/load_data.h"

namespace convgate::session {

struct DataOptions {
  inputs::InputOptions generate;                     // used when no inputs are loaded
  std::optional<std::filesystem::path> load_inputs;  // --load-inputs
  loaders::LoaderOptions loaders;                    // --data and how its files are read
  std::optional<std::filesystem::path> save_inputs;  // --save-inputs
  // --save-outputs: `run` saves the model's outputs, `compare` the source's (the reference, which
  // is often the slow side: save once, then compare later targets against the file). Same layouts
  // as inputs (.npz flat or sample_<i>/<name>; otherwise an ONNX test-case folder).
  std::optional<std::filesystem::path> save_outputs;
  int threads = 0;           // intra-op threads; 0 = runtime default
  int inter_op_threads = 0;  // --inter-op-threads (backends::LoadOptions::inter_op_threads)
  // --ort-optimization: ONNX Runtime's graph optimization level for every ort model loaded.
  backends::GraphOptimization graph_optimization = backends::GraphOptimization::kExtended;
  // --new-tokens: how many tokens the hf backend generates per run.
  int new_tokens = 8;
  // --present-key-values: the hf backend's text generation also returns the prompt's key/value
  // cache (backends::LoadOptions::present_key_values).
  bool present_key_values = false;
  // --prompt: the text a Hugging Face model's inputs are tokenized from (session/data_inputs.h
  // HfModelInputs); empty for the task's default ("Hello" for generation, as OpenVINO's
  // verify-conversion gate does).
  std::string prompt;
  // --max-tensor-bytes, --max-run-bytes, --run-timeout: the files read, the tensors a run may
  // hold and the time a model run may take (core/limits.h). The backends get them through
  // SideLoadOptions.
  Limits limits;
  // Set by a workflow that takes its samples one at a time (session/side_pair.h): generated and
  // --data samples are then streamed (inputs::Dataset::make), unless --save-inputs writes them
  // all. Not a flag.
  bool stream = false;

  // Whether the inputs come from the user's files (--load-inputs or --data), not generated.
  bool inputs_given() const { return load_inputs.has_value() || !loaders.specs.empty(); }
};

// How one side runs: the "exec" backend's command (backends::LoadOptions::exec_argv), and the
// runtime settings given for this side alone (--source-threads, --target-ort-optimization, ...),
// which override DataOptions' for both sides, so one side can change while the other stays put.
struct ExecOptions {
  std::vector<std::string> argv;   // the command template; empty unless the side uses exec
  double timeout_seconds = 600.0;  // per run of the command (--exec-timeout); <= 0: none
  std::optional<int> threads;
  std::optional<int> inter_op_threads;
  std::optional<backends::GraphOptimization> graph_optimization;
};

}  // namespace convgate::session
