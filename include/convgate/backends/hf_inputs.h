// Inputs that exercise a Hugging Face model folder, for the hf backend's models: the tokenized
// prompt (ids inside the vocabulary, attention mask of ones, token types of zeros), pixel values at
// the config's channels and image size, audio at the length the model takes; decided by the
// folder's task (runtime/hf_tasks.py) and written by the process's `hf_runner.py host`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::backends {

struct HfInputsRequest {
  std::filesystem::path folder;  // a folder IsHfModelFolder accepts
  std::string prompt;            // empty: "Hello" for generation, a sentence for encoders
  uint64_t seed = 1;             // seeds the random parts; sample i uses seed + i
  int samples = 1;
  std::filesystem::path out;  // the .npz written (flat for one sample, sample_<i>/<name> else)
};

// Writes request.out and returns what the inputs are, for the report ("prompt 'Hello' tokenized
// by tokenizer.json (5 tokens)"). FailedPrecondition without the venv; DataLoss naming the folder
// when the runner cannot make them (no tokenizer.json for a text prompt, an unknown task).
Result<std::string> MakeHfInputs(const HfInputsRequest& request);

// Tells the process's hf runner, when one is running, to import what models of `runtimes`
// ("pytorch", "openvino", "onnxruntime") need while convgate goes on: verify asks before an
// optimum export, so the imports overlap the export instead of following it.
void WarmHfRunner(const std::vector<std::string>& runtimes);

}  // namespace convgate::backends
