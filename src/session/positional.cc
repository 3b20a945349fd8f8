#include "convgate/session/positional.h"

#include <filesystem>

#include "convgate/core/join.h"

namespace convgate::session {
namespace {

bool IsUntyped(const TensorInfo& info) { return !info.dtype && info.type_name == kUntypedTensor; }

// True when every name of `positional` is also one of `named`'s and the counts agree: the
// positional side named its outputs itself (a dict), so names pair them.
bool SameNames(const TensorMap& positional, const TensorMap& named) {
  if (positional.size() != named.size()) return false;
  for (const auto& entry : positional) {
    if (!named.Contains(entry.name)) return false;
  }
  return true;
}

}  // namespace

bool HasUntypedInputs(const Signature& signature) {
  for (const TensorInfo& info : signature.inputs) {
    if (IsUntyped(info)) return true;
  }
  return false;
}

Signature WithGeneratedTypes(const Signature& signature, std::vector<std::string>& notes) {
  Signature typed = signature;
  for (TensorInfo& info : typed.inputs) {
    if (!IsUntyped(info)) continue;
    info.dtype = DType::kFloat32;
    info.type_name = "float32";
    notes.push_back("input '" + info.name +
                    "' declares no dtype (TorchScript does not record one): generated float32; "
                    "give other dtypes with --load-inputs");
  }
  return typed;
}

Signature WithLoadedTypes(const Signature& signature, const inputs::Dataset& dataset) {
  Signature typed = signature;
  if (dataset.samples.empty()) return typed;
  const TensorMap& sample = dataset.samples.front();
  for (TensorInfo& info : typed.inputs) {
    const Tensor* tensor = sample.Find(info.name);
    if (!IsUntyped(info) || tensor == nullptr) continue;
    info.dtype = tensor->dtype();
    info.type_name = std::string(DTypeName(tensor->dtype()));
  }
  return typed;
}

Status CheckShapesGiven(const Signature& signature, const inputs::InputOptions& options) {
  for (const auto& [name, shape] : options.shape_per_input) {
    // A typo in a --shape name is the better message: GenerateDataset gives it.
    if (signature.FindInput(name) == nullptr) return Status::OK();
  }
  std::vector<std::string> missing, flags;
  for (const TensorInfo& info : signature.inputs) {
    if (info.has_shape || options.shape_per_input.count(info.name) != 0) continue;
    missing.push_back("'" + info.name + "'");
    flags.push_back("--shape " + info.name + ":DIMS");
  }
  if (missing.empty()) return Status::OK();
  std::string flag_text;
  for (const std::string& flag : flags) flag_text += (flag_text.empty() ? "" : " ") + flag;
  return Status::InvalidArgument(
      "the model declares no input shapes (TorchScript records none), so generating inputs needs "
      "a --shape for each: missing for input " +
      JoinComma(missing, "none") + " (give " + flag_text + ", e.g. 1x3x224x224, or --load-inputs)");
}

Status CheckPositionalFits(const inputs::Dataset& dataset, const Signature& signature,
                           const std::string& model_path) {
  // No inputs listed at all (the exec backend on a file that is not ONNX): the count is unknown
  // too, and the command takes whatever the dataset holds.
  if (signature.inputs.empty()) return Status::OK();
  std::vector<std::string> wanted;
  for (const TensorInfo& info : signature.inputs) wanted.push_back(info.name);
  for (size_t sample_idx = 0; sample_idx < dataset.samples.size(); ++sample_idx) {
    const TensorMap& sample = dataset.samples[sample_idx];
    if (sample.size() == wanted.size()) continue;
    return Status::FailedPrecondition(
        "the inputs do not fit " + model_path + ": it takes " + std::to_string(wanted.size()) +
        " input(s) by position (" + JoinComma(wanted, "none") + "), but sample " +
        std::to_string(sample_idx) + " has " + std::to_string(sample.size()) + " (" +
        JoinComma(sample.Names(), "none") + ")");
  }
  return Status::OK();
}

std::optional<std::string> MatchOutputsByPosition(TensorMap& positional, const TensorMap& named,
                                                  SideRecord& record, const std::string& named_role,
                                                  bool first_sample) {
  if (SameNames(positional, named)) {
    if (first_sample) record.output_matching = "name";
    return std::nullopt;
  }
  // A model side is named by its backend ("torch"), saved outputs by their file ("ref.npz").
  const bool saved = record.kind == "outputs";
  const std::string label =
      saved ? std::filesystem::path(record.path).filename().string() : record.backend;
  if (positional.size() != named.size()) {
    if (first_sample) record.output_matching = "position";
    return "outputs cannot be matched by position: the " + record.role + " (" + label +
           ") names no outputs and " + (saved ? "holds " : "returned ") +
           std::to_string(positional.size()) + " (" + JoinComma(positional.Names(), "none") +
           "), the " + named_role + " has " + std::to_string(named.size()) + " (" +
           JoinComma(named.Names(), "none") + ")";
  }
  TensorMap renamed;
  for (size_t idx = 0; idx < positional.size(); ++idx) {
    if (first_sample)
      record.output_renames.push_back(positional[idx].name + " -> " + named[idx].name);
    renamed.InsertOrAssign(named[idx].name, std::move(positional[idx].tensor));
  }
  positional = std::move(renamed);
  if (first_sample) {
    record.output_matching = "position";
    record.notes.push_back("outputs matched by position to the " + named_role + "'s (" + label +
                           " names none): " + JoinComma(record.output_renames, "none"));
  }
  return std::nullopt;
}

Status BindPositionalInputs(inputs::Dataset& dataset, const Signature& signature) {
  if (dataset.samples.empty() || signature.inputs.empty()) return Status::OK();
  for (const TensorInfo& input : signature.inputs) {
    if (input.name.rfind("arr_", 0) == 0) return Status::OK();
  }
  // Every sample's names must be arr_0 .. arr_{n-1}, in any order.
  const auto index_of = [](const std::string& name) -> int64_t {
    if (name.size() < 5 || name.rfind("arr_", 0) != 0) return -1;
    int64_t index = 0;
    for (size_t i = 4; i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9' || index > 1000000) return -1;
      index = index * 10 + (name[i] - '0');
    }
    return index;
  };
  for (const TensorMap& sample : dataset.samples) {
    std::vector<bool> seen(sample.size(), false);
    for (const auto& entry : sample) {
      const int64_t index = index_of(entry.name);
      if (index < 0 || index >= static_cast<int64_t>(sample.size()) || seen[index]) {
        return Status::OK();
      }
      seen[index] = true;
    }
  }
  const size_t count = dataset.samples.front().size();
  std::vector<std::string> names;
  for (const TensorInfo& input : signature.inputs) names.push_back(input.name);
  if (count != signature.inputs.size()) {
    return Status::FailedPrecondition(
        dataset.origin + " names its " + std::to_string(count) +
        " array(s) by position (arr_0, ...), and the model takes " +
        std::to_string(signature.inputs.size()) + " input(s) (" + JoinComma(names, "none") +
        "): save one array per input, in order, or name them (np.savez(f, " + names.front() +
        "=...))");
  }
  for (TensorMap& sample : dataset.samples) {
    std::vector<Tensor> ordered(count);
    for (auto& entry : sample) ordered[index_of(entry.name)] = std::move(entry.tensor);
    TensorMap renamed;
    for (size_t i = 0; i < count; ++i) renamed.Append(names[i], std::move(ordered[i]));
    sample = std::move(renamed);
  }
  std::string binding;
  for (size_t i = 0; i < count; ++i) {
    binding += (i ? ", " : "") + std::string("arr_") + std::to_string(i) + " -> " + names[i];
  }
  dataset.notes.push_back(dataset.origin +
                          " names its arrays by position: bound in the model's "
                          "input order (" +
                          binding + ")");
  return Status::OK();
}

}  // namespace convgate::session
