// A dataset is N samples; a sample is one set of named input tensors. Datasets are generated from
// a model's signature or loaded from files, and can be saved for reuse (--save-inputs).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/input_options.h"

namespace convgate::inputs {

struct Dataset {
  std::vector<TensorMap> samples;
  std::string origin;              // "generated (uniform, seed 1)" or the file it was loaded from
  std::vector<std::string> notes;  // facts the report must carry ("dim 'batch' of input 'x' unbound: used 1")
};

// Generates options.samples samples for every input of `signature`, in declaration order.
// Shapes: --shape for that input wins; otherwise fixed dims are kept, symbolic dims take
// --dim values, and unbound or unknown dims become 1 (each such default is recorded in notes).
// A --shape that contradicts a fixed declared dim, or an input whose dtype convgate cannot hold
// (string), is InvalidArgument naming the input. Names in options that match no input are
// InvalidArgument too (a typo must not silently fall back to defaults).
Result<Dataset> GenerateDataset(const Signature& signature, const InputOptions& options);

// Loads samples from:
//  - an .npz: flat (one sample, member name = input name) or with every member named
//    "sample_<i>/<input>" (several samples, as SaveDataset writes them);
//  - a single .npy (one sample of a single-input model; named by `single_input_name`);
//  - a folder of <input>.npy files (one sample);
//  - an ONNX test-case folder or test_data_set_N folder (one sample per data set; input_K.pb named
//    by position from `signature`).
// Errors name the file.
Result<Dataset> LoadDataset(const std::filesystem::path& path, const Signature& signature);

// .npz (layout as above: flat for one sample) or, when `path` has no .npz extension, an ONNX test
// case folder (test_data_set_<i>/input_K.pb in signature order).
Status SaveDataset(const std::filesystem::path& path, const Dataset& dataset,
                   const Signature& signature);

// Checks every sample against the signature: each declared input present (missing ones named,
// with the file), dtype equal to the declared one, rank and fixed dims equal to the declared ones,
// symbolic dims bound consistently within a sample. FailedPrecondition naming the sample, the
// input, the file (dataset.origin) and both values. Tensors the model does not take are dropped
// from the samples and named in dataset.notes (an npz may hold inputs and outputs together).
Status ValidateDataset(Dataset& dataset, const Signature& signature);

}  // namespace convgate::inputs
