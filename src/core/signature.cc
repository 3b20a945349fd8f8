#include "convgate/core/signature.h"

namespace convgate {
namespace {

const TensorInfo* FindByName(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (const TensorInfo& info : infos) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace

const TensorInfo* Signature::FindInput(const std::string& name) const {
  return FindByName(inputs, name);
}

const TensorInfo* Signature::FindOutput(const std::string& name) const {
  return FindByName(outputs, name);
}

std::string FormatDims(const TensorInfo& info) {
  if (!info.has_shape) return "(no shape)";
  std::string text = "[";
  for (size_t axis = 0; axis < info.shape.size(); ++axis) {
    if (axis > 0) text += ", ";
    const Dim& dim = info.shape[axis];
    if (dim.is_fixed()) {
      text += std::to_string(dim.value);
    } else {
      text += dim.symbol.empty() ? "?" : dim.symbol;
    }
  }
  return text + "]";
}

}  // namespace convgate
