// Checking a sample against a model's declared inputs before a runtime sees it (shared by the
// backends whose runtimes give poor messages for a wrong input: opencv, exec).
#pragma once

#include <filesystem>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::backends {

// Every declared input present with its declared dtype and a shape matching the declared rank
// and fixed dims, and no tensor the model does not take. FailedPrecondition naming the model and
// the input; Unimplemented for a declared input whose type convgate cannot hold. With
// positional_inputs (names unknown) nothing is checked.
Status CheckDeclaredInputs(const Signature& signature, const TensorMap& inputs,
                           const std::filesystem::path& model_path);

// Unimplemented naming the model and the output when one of `names` is a declared output whose
// type convgate cannot hold (a sequence, a map, complex numbers).
Status CheckOutputsHoldable(const Signature& signature, const std::vector<std::string>& names,
                            const std::filesystem::path& model_path);

// InvalidArgument naming the model when `names` repeats a name.
Status CheckNoRepeats(const std::vector<std::string>& names,
                      const std::filesystem::path& model_path);

}  // namespace convgate::backends
