#include "backends/check_inputs.h"

#include <set>

namespace convgate::backends {
namespace {

std::string JoinNames(const std::vector<TensorInfo>& infos) {
  std::string joined;
  for (const TensorInfo& info : infos) joined += (joined.empty() ? "" : ", ") + info.name;
  return joined.empty() ? "(none)" : joined;
}

std::string DescribeDeclared(const TensorInfo& info) {
  return info.type_name + (info.has_shape ? FormatDims(info) : " of any shape");
}

bool ShapeMatches(const TensorInfo& declared, const Shape& shape) {
  if (!declared.has_shape) return true;
  if (declared.shape.size() != shape.rank()) return false;
  for (size_t axis = 0; axis < shape.rank(); ++axis) {
    const Dim& dim = declared.shape[axis];
    if (dim.is_fixed() && dim.value != shape.dim(axis)) return false;
  }
  return true;
}

Status CheckInput(const TensorInfo& declared, const Tensor& tensor, const std::string& prefix) {
  if (!declared.dtype) {
    return Status::Unimplemented(prefix + "has type " + declared.type_name +
                                 ", which convgate cannot feed");
  }
  if (*declared.dtype != tensor.dtype() || !ShapeMatches(declared, tensor.shape())) {
    return Status::FailedPrecondition(prefix + "is " + tensor.Describe() + ", the model wants " +
                                      DescribeDeclared(declared));
  }
  return Status::OK();
}

}  // namespace

Status CheckDeclaredInputs(const Signature& signature, const TensorMap& inputs,
                           const std::filesystem::path& model_path) {
  if (signature.positional_inputs) return Status::OK();
  for (const TensorInfo& declared : signature.inputs) {
    const std::string prefix = model_path.string() + ": input '" + declared.name + "' ";
    const Tensor* tensor = inputs.Find(declared.name);
    if (tensor == nullptr) {
      return Status::FailedPrecondition(prefix + "(" + DescribeDeclared(declared) +
                                        ") is missing; the model's inputs are " +
                                        JoinNames(signature.inputs));
    }
    CONVGATE_RETURN_IF_ERROR(CheckInput(declared, *tensor, prefix));
  }
  for (const TensorMap::Entry& entry : inputs) {
    if (signature.FindInput(entry.name) == nullptr) {
      return Status::FailedPrecondition(model_path.string() + ": '" + entry.name +
                                        "' is not an input of the model; its inputs are " +
                                        JoinNames(signature.inputs));
    }
  }
  return Status::OK();
}

Status CheckNoRepeats(const std::vector<std::string>& names,
                      const std::filesystem::path& model_path) {
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) {
      return Status::InvalidArgument(model_path.string() + ": output '" + name +
                                     "' requested twice");
    }
  }
  return Status::OK();
}

Status CheckOutputsHoldable(const Signature& signature, const std::vector<std::string>& names,
                            const std::filesystem::path& model_path) {
  for (const std::string& name : names) {
    const TensorInfo* declared = signature.FindOutput(name);
    if (declared != nullptr && !declared->dtype) {
      return Status::Unimplemented(model_path.string() + ": output '" + name + "' has type " +
                                   declared->type_name +
                                   "; convgate handles numeric, bool and string tensors only");
    }
  }
  return Status::OK();
}

}  // namespace convgate::backends
