// ValidateDataset: every sample against the model's declared inputs, before anything runs.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "convgate/inputs/dataset.h"

namespace convgate::inputs {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// "inputs.npz" for a single sample, "sample 2 of inputs.npz" otherwise.
std::string Where(const Dataset& dataset, size_t sample_idx) {
  if (dataset.samples.size() == 1) return dataset.origin;
  return "sample " + std::to_string(sample_idx) + " of " + dataset.origin;
}

bool ShapeMatches(const TensorInfo& info, const Shape& shape) {
  if (!info.has_shape) return true;
  if (shape.rank() != info.shape.size()) return false;
  for (size_t axis = 0; axis < shape.rank(); ++axis) {
    if (info.shape[axis].is_fixed() && info.shape[axis].value != shape.dim(axis)) return false;
  }
  return true;
}

// Where a symbolic dim got its value in this sample, for the message when another input disagrees.
struct SymbolUse {
  int64_t value;
  std::string input;
};

Status CheckSymbols(const TensorInfo& info, const Shape& shape, const std::string& where,
                    std::map<std::string, SymbolUse>& uses) {
  if (!info.has_shape) return Status::OK();
  for (size_t axis = 0; axis < info.shape.size(); ++axis) {
    const Dim& dim = info.shape[axis];
    if (dim.is_fixed() || dim.symbol.empty()) continue;
    auto [it, inserted] = uses.try_emplace(dim.symbol, SymbolUse{shape.dim(axis), info.name});
    if (inserted || it->second.value == shape.dim(axis)) continue;
    return Status::FailedPrecondition("inputs in " + where + " disagree on dim '" + dim.symbol +
                                      "': input '" + it->second.input + "' has " +
                                      std::to_string(it->second.value) + ", input '" + info.name +
                                      "' has " + std::to_string(shape.dim(axis)));
  }
  return Status::OK();
}

Status CheckInput(const TensorInfo& info, const Tensor& tensor, const std::string& where) {
  if (!info.dtype) {
    return Status::Unimplemented("the model's input '" + info.name + "' has type " +
                                 info.type_name + ", which convgate cannot feed");
  }
  if (tensor.dtype() != *info.dtype) {
    return Status::FailedPrecondition("input '" + info.name + "' in " + where + " is " +
                                      std::string(DTypeName(tensor.dtype())) +
                                      ", the model wants " + std::string(DTypeName(*info.dtype)));
  }
  if (!ShapeMatches(info, tensor.shape())) {
    return Status::FailedPrecondition("input '" + info.name + "' in " + where + " has shape " +
                                      tensor.shape().ToString() + ", the model wants " +
                                      FormatDims(info));
  }
  return Status::OK();
}

Status CheckSample(const Dataset& dataset, size_t sample_idx, const Signature& signature) {
  const TensorMap& sample = dataset.samples[sample_idx];
  const std::string where = Where(dataset, sample_idx);
  std::map<std::string, SymbolUse> symbol_uses;
  for (const TensorInfo& info : signature.inputs) {
    const Tensor* tensor = sample.Find(info.name);
    if (tensor == nullptr) {
      const std::string has = sample.empty() ? "nothing" : Join(sample.Names());
      return Status::FailedPrecondition("input '" + info.name + "' is missing from sample " +
                                        std::to_string(sample_idx) + " of " + dataset.origin +
                                        " (has: " + has + ")");
    }
    CONVGATE_RETURN_IF_ERROR(CheckInput(info, *tensor, where));
    CONVGATE_RETURN_IF_ERROR(CheckSymbols(info, tensor->shape(), where, symbol_uses));
  }
  return Status::OK();
}

// Rebuilds every sample with exactly the declared inputs in declaration order; returns the names
// of the other tensors, each once, in the order first seen.
std::vector<std::string> KeepDeclaredInputs(Dataset& dataset, const Signature& signature) {
  std::vector<std::string> dropped;
  std::set<std::string> seen;
  for (TensorMap& sample : dataset.samples) {
    for (const TensorMap::Entry& entry : sample) {
      if (signature.FindInput(entry.name) == nullptr && seen.insert(entry.name).second) {
        dropped.push_back(entry.name);
      }
    }
    TensorMap kept;
    for (const TensorInfo& info : signature.inputs) {
      kept.InsertOrAssign(info.name, std::move(*sample.Find(info.name)));
    }
    sample = std::move(kept);
  }
  return dropped;
}

}  // namespace

Status ValidateDataset(Dataset& dataset, const Signature& signature) {
  if (dataset.samples.empty()) {
    return Status::FailedPrecondition("no samples in " + dataset.origin);
  }
  // Check everything first so that a failure leaves the dataset as it was.
  for (size_t sample_idx = 0; sample_idx < dataset.samples.size(); ++sample_idx) {
    CONVGATE_RETURN_IF_ERROR(CheckSample(dataset, sample_idx, signature));
  }
  const std::vector<std::string> dropped = KeepDeclaredInputs(dataset, signature);
  if (!dropped.empty()) {
    dataset.notes.push_back("dropped from " + dataset.origin +
                            " (not inputs of the model): " + Join(dropped));
  }
  return Status::OK();
}

}  // namespace convgate::inputs
