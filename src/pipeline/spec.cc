#include "convgate/pipeline/spec.h"

namespace convgate::pipeline {

std::string InitialValue::Describe() const {
  if (!zeros) return tensor.empty() ? file.string() : file.string() + " (tensor '" + tensor + "')";
  std::string text = "zeros " + std::string(dtype ? DTypeName(*dtype) : "?") + "[";
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    text += (axis ? ", " : "") + std::to_string(shape[axis]);
  }
  return text + "]";
}

std::string EdgeSpec::ToString() const {
  return from.ToString() + " -> " + to.ToString() + (feedback ? " (feedback)" : "");
}

const NodeSpec* Spec::FindNode(const std::string& name) const {
  for (const NodeSpec& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

const TensorInfo* FindDecl(const std::vector<TensorInfo>& decls, const std::string& name) {
  for (const TensorInfo& info : decls) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string DescribeDecl(const TensorInfo& info) { return info.type_name + FormatDims(info); }

}  // namespace convgate::pipeline
