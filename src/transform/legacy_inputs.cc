#include "transform/legacy_inputs.h"

#include <unordered_map>
#include <unordered_set>

namespace convgate::transform {
namespace {

// IR 4 is the first version in which initializers need not be graph inputs.
bool IsLegacy(const onnx::ModelProto& model) { return model.ir_version() < 4; }

onnx::ValueInfoProto InputFor(const onnx::TensorProto& init) {
  onnx::ValueInfoProto input;
  input.set_name(init.name());
  onnx::TypeProto_Tensor* tensor = input.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(init.data_type());
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t dim : init.dims()) shape->add_dim()->set_dim_value(dim);
  return input;
}

}  // namespace

std::vector<onnx::ValueInfoProto> DetachLegacyInitializerInputs(onnx::ModelProto& model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  std::vector<onnx::ValueInfoProto> original(graph.input().begin(), graph.input().end());
  if (!IsLegacy(model)) return original;
  std::unordered_set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  for (const onnx::ValueInfoProto& input : original) {
    if (initializers.count(input.name()) == 0) *inputs.Add() = input;
  }
  graph.mutable_input()->Swap(&inputs);
  return original;
}

void ReattachLegacyInitializerInputs(onnx::ModelProto& model,
                                     const std::vector<onnx::ValueInfoProto>& original) {
  if (!IsLegacy(model)) return;
  onnx::GraphProto& graph = *model.mutable_graph();
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers[init.name()] = &init;
  std::unordered_set<std::string> detached_inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) detached_inputs.insert(input.name());
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  std::unordered_set<std::string> listed;
  for (const onnx::ValueInfoProto& input : original) {
    if (detached_inputs.count(input.name()) == 0 && initializers.count(input.name()) == 0) {
      continue;  // an initializer a pass removed
    }
    *inputs.Add() = input;
    listed.insert(input.name());
  }
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (listed.count(init.name()) == 0) *inputs.Add() = InputFor(init);
  }
  graph.mutable_input()->Swap(&inputs);
}

}  // namespace convgate::transform
