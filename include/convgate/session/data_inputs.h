// Producing the samples a workflow runs on: loaded (--load-inputs), carried by a test case, or
// generated from the model's signature; then validated against the signature and saved on request.
#pragma once

#include <optional>

#include "convgate/core/signature.h"
#include "convgate/inputs/dataset.h"
#include "convgate/session/options.h"
#include "convgate/session/records.h"
#include "convgate/session/run_bytes.h"

namespace convgate::session {

// Inputs that exercise a Hugging Face model (backends/hf_inputs.h), used in place of convgate's
// generic generation when the side that decides the inputs runs on the hf backend and the user
// asked for nothing else: no --load-inputs and none of --fill, --val-range, --shape, --dim (any
// of those means "generate as I say", as for every other model). nullopt when the generic rules
// apply; the dataset (origin: what the inputs are) otherwise.
Result<std::optional<inputs::Dataset>> HfModelInputs(const SideRecord& side,
                                                     const DataOptions& data);

// The options for the model at `model_path`: --data text's tokenizer, when none was given, is the
// tokenizer.json in the model's folder (a Hugging Face export) or beside the model file.
DataOptions ForModel(const DataOptions& options, const std::string& model_path);

// --save-inputs is written here, unless the data set is streamed (DataOptions::stream): its
// workflow then writes each sample as it is made.
// On failure, `error` says which stage failed (flags for bad generation options, inputs for
// unreadable or unfitting input files, and for a run whose inputs and `held` outputs need more than
// options.limits.max_run_bytes: generated inputs are refused from their planned shapes, before any
// is allocated).
std::optional<inputs::Dataset> PrepareDataset(const DataOptions& options,
                                              const Signature& signature,
                                              std::optional<inputs::Dataset> provided,
                                              const HeldOutputs& held, DatasetRecord& record,
                                              std::optional<GateError>& error);

// The dtype data of `given` dtype is cast to for an input declared `declared` with another
// floating dtype (float32 data for a float16 input); nullopt when it is taken as it is, or when
// the change is not a floating-point width (the dataset check then says so).
std::optional<DType> FloatingCast(DType given, const TensorInfo& declared);

// Casts the inputs of `dataset` that a model declares with another floating dtype (float32 data
// for an fp16 model without keep-IO-types) to that dtype, each named once in `notes`. Other
// dtype differences are left for the dataset check to refuse.
Status CastToDeclared(inputs::Dataset& dataset, const Signature& signature,
                      std::vector<std::string>& notes);

// The data set a workflow runs `side` on: `provided` (a test case's inputs, the caller's), else
// the side's Hugging Face inputs (HfModelInputs), else what `data` says (PrepareDataset), with the
// options for the side's model (ForModel).
std::optional<inputs::Dataset> PrepareSideDataset(const DataOptions& data, const SideRecord& side,
                                                  const Signature& signature,
                                                  std::optional<inputs::Dataset> provided,
                                                  const HeldOutputs& held, DatasetRecord& record,
                                                  std::optional<GateError>& error);

// Checks that a dataset prepared for one model also fits another (both sides of a compare must
// take the same inputs). FailedPrecondition naming the model.
Status CheckDatasetFits(inputs::Dataset& dataset, const Signature& signature,
                        const std::string& model_path);

// True if every floating-point input value of the sample is finite.
bool AllInputsFinite(const TensorMap& sample);

}  // namespace convgate::session
