// The "hf" backend: Hugging Face text-generation model folders, run by runtime/hf_runner.py in
// the project's venv: a transformers folder (config.json + PyTorch weights) on PyTorch, or an
// optimum-intel OpenVINO export on OpenVINO's CPU plugin. Each Run generates N tokens greedily
// from the prompt in input_ids and returns the token ids and the first step's logits, so the
// source and its export compare as any two models do (ids exactly, logits under the policy).
#pragma once

#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

std::unique_ptr<Backend> CreateHfBackend();

// Whether `path` is a folder the hf backend runs: one holding a config.json.
bool IsHfModelFolder(const std::filesystem::path& path);

}  // namespace convgate::backends
