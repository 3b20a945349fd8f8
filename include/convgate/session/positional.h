// Sides whose backend works by position (TorchScript: Signature::positional_inputs and
// positional_outputs), matched to sides that work by name.
//
// Inputs: a side with named inputs decides the dataset (generated from or validated against its
// signature), and a positional side takes those tensors in that order. A positional model alone
// declares no input dtypes: generated inputs are float32, loaded ones keep their dtype.
// Outputs: a positional side's outputs (output_0, output_1, ...; saved outputs that name nothing:
// numpy's arr_0, arr_1, ... or a lone .npy) take the other side's output names in order; the
// report records it (SideRecord::output_matching).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/dataset.h"
#include "convgate/session/records.h"

namespace convgate::session {

// True for inputs of type kUntypedTensor: a tensor of undeclared dtype (TorchScript).
bool HasUntypedInputs(const Signature& signature);

// The signature to generate inputs from: each untyped tensor input becomes float32, with a note
// saying so (the dtype torchvision-style models take; --load-inputs gives any other).
Signature WithGeneratedTypes(const Signature& signature, std::vector<std::string>& notes);

// The signature to validate loaded inputs against: each untyped tensor input takes the dtype of
// the tensor of that name in the first sample (left untyped when the sample lacks it, so that the
// validation names the missing input).
Signature WithLoadedTypes(const Signature& signature, const inputs::Dataset& dataset);

// Generating inputs for a model whose inputs declare no shape (TorchScript) needs a --shape for
// each of them: InvalidArgument naming every input that has none.
Status CheckShapesGiven(const Signature& signature, const inputs::InputOptions& options);

// A dataset prepared for another model, checked against a positional one: the same number of
// inputs (names and dtypes are not declared). FailedPrecondition naming the model.
Status CheckPositionalFits(const inputs::Dataset& dataset, const Signature& signature,
                           const std::string& model_path);

// Inputs saved by position (numpy's np.savez(f, x): arr_0, arr_1, ...) bound to the model's inputs
// in declaration order, with a note, when the model names none of its inputs so. FailedPrecondition
// naming the file when the counts differ; the dataset is left as it is when its names are not all
// arr_N or the model has an input named arr_N.
Status BindPositionalInputs(inputs::Dataset& dataset, const Signature& signature);

// Renames `positional`'s outputs in order to `named`'s names, unless its names already are the
// named side's (a TorchScript Dict[str, Tensor] with the same keys). On the first sample, sets
// record.output_matching ("position" or "name") and, for a renaming, output_renames and a note.
// Returns a structure-failure sentence when the counts differ (names are then left as they are).
std::optional<std::string> MatchOutputsByPosition(TensorMap& positional, const TensorMap& named,
                                                  SideRecord& record, const std::string& named_role,
                                                  bool first_sample);

}  // namespace convgate::session
