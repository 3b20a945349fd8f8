// Where --save-inputs and --save-outputs may write. Checked before anything loads or runs (a slow
// source must not run only for its outputs to be refused), so that saving never destroys what the
// user has or what the other flag writes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "convgate/session/options.h"
#include "convgate/session/records.h"

namespace convgate::session {

// A path this run reads: "the source", "the target", "the model".
struct ReadPath {
  std::string role;
  std::filesystem::path path;
};

// Refuses, as a usage error (Stage::kFlags) naming the flag and the path:
//  - an .npy save path (one tensor cannot hold a dataset);
//  - both flags naming one .npz (it holds one set of tensors: the outputs would replace the
//    inputs); both naming one folder is allowed and makes one ONNX test case, input_K.pb beside
//    output_K.pb;
//  - a save path that this run reads (`read`, or --load-inputs), except --save-outputs into the
//    test-case folder the inputs are loaded from, which adds output_K.pb beside its input_K.pb;
//  - a folder already holding the other half of a test case (output_K.pb for --save-inputs,
//    input_K.pb for --save-outputs) that this run neither writes nor read its inputs from: the new
//    files would be paired with tensors they were not computed from;
//  - a folder of .npy files, which a test case written into it would hide when it is loaded.
std::optional<GateError> CheckSavePaths(const DataOptions& options,
                                        const std::vector<ReadPath>& read);

}  // namespace convgate::session
