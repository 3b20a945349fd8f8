#include "dataset_setup.h"

#include <cmath>

namespace convgate::gate::internal {
namespace {

void Describe(const inputs::Dataset& dataset, DatasetRecord& record) {
  record.origin = dataset.origin;
  record.samples = static_cast<int>(dataset.samples.size());
  record.notes = dataset.notes;
  record.tensors.clear();
  if (dataset.samples.empty()) return;
  for (const auto& entry : dataset.samples.front()) {
    record.tensors.push_back(
        {entry.name, std::string(DTypeName(entry.tensor.dtype())), entry.tensor.shape().dims()});
  }
}

Result<inputs::Dataset> Obtain(const DataOptions& options, const Signature& signature,
                               std::optional<inputs::Dataset> provided, Stage& stage) {
  stage = Stage::kInputs;
  if (options.load_inputs.has_value()) return inputs::LoadDataset(*options.load_inputs, signature);
  if (provided.has_value()) return std::move(*provided);
  Result<inputs::Dataset> generated = inputs::GenerateDataset(signature, options.generate);
  // Generation fails on options that do not fit the model (a --shape against a fixed dim, a
  // --dim symbol the model lacks): usage errors. A model input convgate cannot fill is not.
  if (!generated.ok() && generated.status().code() == StatusCode::kInvalidArgument) {
    stage = Stage::kFlags;
  }
  return generated;
}

}  // namespace

std::optional<inputs::Dataset> PrepareDataset(const DataOptions& options,
                                              const Signature& signature,
                                              std::optional<inputs::Dataset> provided,
                                              DatasetRecord& record,
                                              std::optional<GateError>& error) {
  Stage stage = Stage::kInputs;
  Result<inputs::Dataset> dataset = Obtain(options, signature, std::move(provided), stage);
  if (!dataset.ok()) {
    error = GateError{stage, dataset.status()};
    return std::nullopt;
  }
  Status valid = inputs::ValidateDataset(*dataset, signature);
  Describe(*dataset, record);
  if (!valid.ok()) {
    error = GateError{Stage::kInputs, valid};
    return std::nullopt;
  }
  if (options.save_inputs.has_value()) {
    Status saved = inputs::SaveDataset(*options.save_inputs, *dataset, signature);
    if (!saved.ok()) {
      error = GateError{Stage::kWrite, saved.WithContext("--save-inputs")};
      return std::nullopt;
    }
    record.saved_to = options.save_inputs->string();
  }
  return std::move(dataset).value();
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

}  // namespace convgate::gate::internal
