#include "convgate/session/data_inputs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "convgate/backends/hf_inputs.h"
#include "convgate/core/temp_dir.h"
#include "convgate/core/tensor_copy.h"
#include "convgate/loaders/load_data.h"
#include "convgate/session/positional.h"

namespace convgate::session {
namespace {

void Describe(const inputs::Dataset& dataset, DatasetRecord& record) {
  record.origin = dataset.origin;
  record.samples = static_cast<int>(dataset.size());
  record.notes = dataset.notes;
  record.files = dataset.files;
  record.tensors.clear();
  if (dataset.samples.empty()) return;
  for (const auto& entry : dataset.samples.front()) {
    record.tensors.push_back(
        {entry.name, std::string(DTypeName(entry.tensor.dtype())), entry.tensor.shape().dims()});
  }
}

// Whether generated and --data samples are made one at a time: a workflow takes them so (and
// saves them as it does: session/side_pair.h).
bool Streams(const DataOptions& options) { return options.stream; }

Result<inputs::Dataset> Obtain(const DataOptions& options, const Signature& signature,
                               std::optional<inputs::Dataset> provided, Stage& stage) {
  stage = Stage::kInputs;
  const bool stream = Streams(options);
  if (options.load_inputs.has_value()) {
    return inputs::LoadDataset(*options.load_inputs, signature, options.limits);
  }
  if (!options.loaders.specs.empty()) {
    Result<inputs::Dataset> loaded =
        loaders::LoadData(options.loaders, signature, options.generate, options.limits, stream);
    // A --data value that does not fit the model is a usage error; a file that cannot be read
    // or decoded is exit 3.
    if (!loaded.ok() && loaded.status().code() == StatusCode::kInvalidArgument) {
      stage = Stage::kFlags;
    }
    return loaded;
  }
  if (provided.has_value()) return std::move(*provided);
  Result<inputs::Dataset> generated =
      stream ? inputs::GenerateStreamedDataset(signature, options.generate)
             : inputs::GenerateDataset(signature, options.generate);
  // Generation fails with InvalidArgument on options that do not fit the model (a --shape against
  // a fixed dim, a --dim symbol the model lacks): usage errors. A model input convgate cannot fill
  // (a float8 or sequence input, more than 2^60 elements declared) is Unimplemented: exit 3.
  if (!generated.ok() && generated.status().code() == StatusCode::kInvalidArgument) {
    stage = Stage::kFlags;
  }
  return generated;
}

// A model whose inputs are unknown altogether (the exec backend on a file that is not ONNX) has
// nothing to generate inputs from or check them against: they are loaded and passed as they are.
std::optional<inputs::Dataset> PrepareUndeclared(const DataOptions& options,
                                                 std::optional<inputs::Dataset> provided,
                                                 const HeldOutputs& held, DatasetRecord& record,
                                                 std::optional<GateError>& error) {
  if (!options.inputs_given() && !provided.has_value()) {
    error = GateError{
        Stage::kFlags,
        Status::InvalidArgument("the model declares no inputs (the exec backend reads input names "
                                "and types only from .onnx files): pass them with --load-inputs")};
    return std::nullopt;
  }
  Stage stage = Stage::kInputs;
  Result<inputs::Dataset> dataset = Obtain(options, Signature{}, std::move(provided), stage);
  if (!dataset.ok()) {
    error = GateError{stage, dataset.status()};
    return std::nullopt;
  }
  Describe(*dataset, record);
  if (Status fits = CheckLoadedRunBytes(*dataset, held, options.limits.max_run_bytes); !fits.ok()) {
    error = GateError{Stage::kInputs, fits};
    return std::nullopt;
  }
  if (options.save_inputs.has_value()) {
    Status saved = inputs::SaveDataset(*options.save_inputs, *dataset, Signature{});
    if (!saved.ok()) {
      error = GateError{Stage::kWrite, saved.WithContext("--save-inputs")};
      return std::nullopt;
    }
    record.saved_to = options.save_inputs->string();
  }
  return std::move(dataset).value();
}

// Generated inputs are held to --max-run-bytes from their planned shapes, before any is
// allocated. A plan that fails is left to generation, which reports it.
std::optional<GateError> CheckGeneratedRunBytes(const DataOptions& options,
                                                const Signature& signature,
                                                const HeldOutputs& held) {
  Result<std::vector<inputs::PlannedInput>> planned =
      inputs::PlanGeneratedInputs(signature, options.generate);
  if (!planned.ok()) return std::nullopt;
  // Streamed, the first sample is held beside the one running.
  const size_t samples = static_cast<size_t>(options.generate.samples);
  Status fits =
      CheckPlannedRunBytes(*planned, Streams(options) ? std::min<size_t>(samples, 2) : samples,
                           held, options.limits.max_run_bytes);
  if (fits.ok()) return std::nullopt;
  return GateError{Stage::kInputs, fits};
}

// The user shaped generated inputs: the generic generator does exactly that.
bool AsksForGeneric(const inputs::InputOptions& generate) {
  const inputs::InputOptions defaults;
  return generate.range.has_value() || !generate.range_per_input.empty() ||
         !generate.fill_per_input.empty() || !generate.shape_per_input.empty() ||
         !generate.dim_per_symbol.empty() || generate.fill != defaults.fill;
}

}  // namespace

std::optional<inputs::Dataset> PrepareDataset(const DataOptions& options,
                                              const Signature& signature,
                                              std::optional<inputs::Dataset> provided,
                                              const HeldOutputs& held, DatasetRecord& record,
                                              std::optional<GateError>& error) {
  if (signature.positional_inputs && signature.inputs.empty()) {
    return PrepareUndeclared(options, std::move(provided), held, record, error);
  }
  Stage stage = Stage::kInputs;
  // A model declaring no input dtypes (TorchScript; positional.h): generated inputs are
  // float32, loaded ones are checked with the dtypes they have.
  const bool untyped = HasUntypedInputs(signature);
  const bool generating = !options.inputs_given() && !provided.has_value();
  std::vector<std::string> type_notes;
  if (untyped && generating) {
    if (Status shapes = CheckShapesGiven(signature, options.generate); !shapes.ok()) {
      error = GateError{Stage::kFlags, shapes};
      return std::nullopt;
    }
  }
  const Signature obtained = untyped ? WithGeneratedTypes(signature, type_notes) : signature;
  if (generating) {
    if (auto refused = CheckGeneratedRunBytes(options, obtained, held)) {
      error = std::move(refused);
      return std::nullopt;
    }
  }
  Result<inputs::Dataset> dataset = Obtain(options, obtained, std::move(provided), stage);
  if (!dataset.ok()) {
    error = GateError{stage, dataset.status()};
    return std::nullopt;
  }
  if (generating) dataset->notes.insert(dataset->notes.end(), type_notes.begin(), type_notes.end());
  if (options.load_inputs.has_value()) {
    if (Status bound = BindPositionalInputs(*dataset, signature); !bound.ok()) {
      error = GateError{Stage::kInputs, bound};
      return std::nullopt;
    }
  }
  const Signature checked = untyped ? WithLoadedTypes(signature, *dataset) : signature;
  Status valid = inputs::ValidateDataset(*dataset, checked);
  Describe(*dataset, record);
  if (!valid.ok()) {
    error = GateError{Stage::kInputs, valid};
    return std::nullopt;
  }
  if (!generating) {
    if (Status fits = CheckLoadedRunBytes(*dataset, held, options.limits.max_run_bytes);
        !fits.ok()) {
      error = GateError{Stage::kInputs, fits};
      return std::nullopt;
    }
  }
  if (options.save_inputs.has_value() && !dataset->is_streamed()) {
    Status saved = inputs::SaveDataset(*options.save_inputs, *dataset, checked);
    if (!saved.ok()) {
      error = GateError{Stage::kWrite, saved.WithContext("--save-inputs")};
      return std::nullopt;
    }
    record.saved_to = options.save_inputs->string();
  }
  return std::move(dataset).value();
}

DataOptions ForModel(const DataOptions& options, const std::string& model_path) {
  DataOptions copy = options;
  std::string& tokenizer = copy.loaders.tokens.tokenizer;
  const bool text = std::any_of(
      copy.loaders.specs.begin(), copy.loaders.specs.end(),
      [](const loaders::DataSpec& spec) { return spec.kind == loaders::DataKind::kText; });
  if (!text || !tokenizer.empty() || model_path.empty()) return copy;
  std::error_code error;
  const std::filesystem::path path = model_path;
  const std::filesystem::path folder =
      std::filesystem::is_directory(path, error) ? path : path.parent_path();
  const std::filesystem::path beside = folder / "tokenizer.json";
  if (std::filesystem::is_regular_file(beside, error)) tokenizer = beside.string();
  return copy;
}

Status CheckDatasetFits(inputs::Dataset& dataset, const Signature& signature,
                        const std::string& model_path) {
  Status valid = inputs::ValidateDataset(dataset, signature);
  if (valid.ok()) return valid;
  return valid.WithContext("the inputs do not fit " + model_path);
}

bool AllInputsFinite(const TensorMap& sample) {
  for (const auto& entry : sample) {
    const Tensor& tensor = entry.tensor;
    if (!IsFloating(tensor.dtype())) continue;
    for (int64_t idx = 0; idx < tensor.num_elements(); ++idx) {
      if (!std::isfinite(tensor.GetDouble(idx))) return false;
    }
  }
  return true;
}

Result<std::optional<inputs::Dataset>> HfModelInputs(const SideRecord& side,
                                                     const DataOptions& data) {
  if (side.backend != "hf" || data.inputs_given()) return std::optional<inputs::Dataset>();
  if (AsksForGeneric(data.generate)) {
    if (!data.prompt.empty()) {
      return Status::InvalidArgument(
          "--prompt has no effect with --fill, --val-range, --shape or --dim: those generate "
          "the inputs as they say; drop one of the two");
    }
    return std::optional<inputs::Dataset>();
  }
  CONVGATE_ASSIGN_OR_RETURN(TempDir temp, TempDir::Create("hf-inputs"));
  backends::HfInputsRequest request;
  request.folder = side.path;
  request.prompt = data.prompt;
  request.seed = data.generate.seed;
  request.samples = data.generate.samples;
  request.out = temp.path() / "inputs.npz";
  Result<std::string> made = backends::MakeHfInputs(request);
  if (!made.ok()) return made.status().WithContext("inputs for " + side.path);
  CONVGATE_ASSIGN_OR_RETURN(inputs::Dataset dataset,
                            inputs::LoadDataset(request.out, Signature{}, data.limits));
  dataset.origin = "made for the model's task by hf_runner.py inputs (seed " +
                   std::to_string(request.seed) + "): " + *made;
  return std::optional<inputs::Dataset>(std::move(dataset));
}

std::optional<inputs::Dataset> PrepareSideDataset(const DataOptions& data, const SideRecord& side,
                                                  const Signature& signature,
                                                  std::optional<inputs::Dataset> provided,
                                                  const HeldOutputs& held, DatasetRecord& record,
                                                  std::optional<GateError>& error) {
  if (!provided) {
    Result<std::optional<inputs::Dataset>> made = HfModelInputs(side, data);
    if (!made.ok()) {
      const bool usage = made.status().code() == StatusCode::kInvalidArgument;
      error = GateError{usage ? Stage::kFlags : Stage::kInputs, made.status()};
      return std::nullopt;
    }
    provided = std::move(*made);
  }
  return PrepareDataset(ForModel(data, side.path), signature, std::move(provided), held, record,
                        error);
}

std::optional<DType> FloatingCast(DType given, const TensorInfo& declared) {
  if (!declared.dtype || *declared.dtype == given) return std::nullopt;
  if (!IsFloating(given) || !IsFloating(*declared.dtype)) return std::nullopt;
  return declared.dtype;
}

Status CastToDeclared(inputs::Dataset& dataset, const Signature& signature,
                      std::vector<std::string>& notes) {
  std::vector<std::pair<std::string, DType>> casts;  // input -> the dtype the model declares
  if (dataset.samples.empty()) return Status::OK();
  for (const TensorInfo& declared : signature.inputs) {
    const Tensor* given = dataset.samples.front().Find(declared.name);
    if (given == nullptr || !FloatingCast(given->dtype(), declared)) continue;
    notes.push_back("input '" + declared.name + "' cast " + std::string(DTypeName(given->dtype())) +
                    " -> " + std::string(DTypeName(*declared.dtype)) + " (the model declares " +
                    std::string(DTypeName(*declared.dtype)) + ")");
    casts.emplace_back(declared.name, *declared.dtype);
  }
  if (casts.empty()) return Status::OK();
  const auto cast_sample = [casts](TensorMap& sample) -> Status {
    for (const auto& [name, dtype] : casts) {
      const Tensor* given = sample.Find(name);
      if (given == nullptr || given->dtype() == dtype) continue;
      CONVGATE_ASSIGN_OR_RETURN(Tensor cast, CastFloating(*given, dtype));
      sample.InsertOrAssign(name, std::move(cast));
    }
    return Status::OK();
  };
  for (TensorMap& sample : dataset.samples) CONVGATE_RETURN_IF_ERROR(cast_sample(sample));
  // A streamed data set makes the rest as they run: cast as they are made.
  if (dataset.make) {
    dataset.make = [make = dataset.make, cast_sample](
                       size_t index, std::vector<inputs::DataFile>& read) -> Result<TensorMap> {
      CONVGATE_ASSIGN_OR_RETURN(TensorMap sample, make(index, read));
      CONVGATE_RETURN_IF_ERROR(cast_sample(sample));
      return sample;
    };
  }
  return Status::OK();
}

}  // namespace convgate::session
