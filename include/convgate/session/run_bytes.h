// What a run will hold, known before anything is allocated (--max-run-bytes, core/limits.h): the
// inputs of every sample (all held at once), one sample's outputs of each model that runs (where
// the model declares their shapes: fixed dims, or symbolic dims the inputs bind), every sample's
// outputs of a model whose outputs are kept to be saved, and outputs already read from files. A
// 70-byte model declaring a float32[1,1024,1024,1024] input would otherwise allocate 4 GiB, hand
// it to the runtime and take as much again for the output before anything said no.
#pragma once

#include <cstdint>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/inputs/dataset.h"

namespace convgate::session {

// Besides the inputs, what a run holds.
struct HeldOutputs {
  struct ModelOutputs {
    const Signature* signature = nullptr;
    // The outputs of every sample are kept (--save-outputs to a .safetensors writes them after
    // the last sample).
    bool every_sample = false;
  };
  std::vector<ModelOutputs> models;
  int64_t saved_bytes = 0;  // outputs read from files, every sample
};

// FailedPrecondition when `samples` samples of `planned` inputs (one sample, as
// inputs::PlanGeneratedInputs gives it) and `held` need more than `max_run_bytes`, naming the
// figure, the largest input and output and the limit; OK otherwise.
Status CheckPlannedRunBytes(const std::vector<inputs::PlannedInput>& planned, size_t samples,
                            const HeldOutputs& held, int64_t max_run_bytes);

// The same for inputs already in memory (loaded from files, or carried by a test case).
Status CheckLoadedRunBytes(const inputs::Dataset& dataset, const HeldOutputs& held,
                           int64_t max_run_bytes);

// The bytes of tensors that outputs read from files hold: numeric bytes, or a string's bytes.
int64_t BytesOf(const std::vector<TensorMap>& samples);
int64_t BytesOf(const TensorMap& sample);

}  // namespace convgate::session
