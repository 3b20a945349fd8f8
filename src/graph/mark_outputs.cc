// WithOutputs and IntermediateNames: exposing intermediate values as graph outputs so a runtime
// can fetch them (per-node comparison, bisection).
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <set>

#include "convgate/graph/internal/model_proto.h"
#include "convgate/graph/onnx_model.h"

namespace convgate::graph {
namespace {

// Every name a value can have in the main graph: node outputs, initializers and graph inputs.
std::set<std::string> ProducedNames(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty()) names.insert(output);
    }
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) names.insert(tensor.name());
  for (const onnx::ValueInfoProto& input : graph.input()) names.insert(input.name());
  return names;
}

// Declared types of values: value_info, graph inputs, and initializers (whose type is their
// element type and dims).
std::map<std::string, onnx::ValueInfoProto> DeclaredTypes(const onnx::GraphProto& graph) {
  std::map<std::string, onnx::ValueInfoProto> types;
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    onnx::ValueInfoProto& info = types[tensor.name()];
    info.set_name(tensor.name());
    onnx::TypeProto::Tensor* tensor_type = info.mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(tensor.data_type());
    onnx::TensorShapeProto* shape = tensor_type->mutable_shape();
    for (int64_t dim : tensor.dims()) shape->add_dim()->set_dim_value(dim);
  }
  for (const onnx::ValueInfoProto& info : graph.input()) types[info.name()] = info;
  for (const onnx::ValueInfoProto& info : graph.value_info()) {
    if (info.has_type()) types[info.name()] = info;
  }
  return types;
}

// Adds the types ONNX shape inference finds for the names in `wanted` that `types` lacks. Runs on
// a copy: inferred value_info must not leak into the model the runtime loads (onnx 1.12's
// inference is older than the runtime's and may disagree with it).
void AddInferredTypes(const onnx::ModelProto& model, const std::set<std::string>& wanted,
                      std::map<std::string, onnx::ValueInfoProto>* types) {
  onnx::ModelProto copy = model;
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception&) {
    return;  // inference is best effort: the runtime infers what it cannot
  }
  for (const onnx::ValueInfoProto& info : copy.graph().value_info()) {
    if (wanted.count(info.name()) != 0 && info.has_type()) (*types)[info.name()] = info;
  }
}

// The requested names that are not outputs yet, in request order, without duplicates.
std::vector<std::string> ExtraOutputs(const onnx::GraphProto& graph,
                                      const std::vector<std::string>& output_names) {
  std::set<std::string> seen;
  for (const onnx::ValueInfoProto& output : graph.output()) seen.insert(output.name());
  std::vector<std::string> extra;
  for (const std::string& name : output_names) {
    if (seen.insert(name).second) extra.push_back(name);
  }
  return extra;
}

}  // namespace

namespace {

// The graph outputs `output_names` add to `model` (those not already outputs), typed as
// WithOutputs says.
Result<std::vector<onnx::ValueInfoProto>> NewOutputs(
    const onnx::ModelProto& model, const std::vector<std::string>& output_names,
    const std::filesystem::path& model_path_for_messages) {
  const std::vector<std::string> extra = ExtraOutputs(model.graph(), output_names);
  std::vector<onnx::ValueInfoProto> outputs;
  if (extra.empty()) return outputs;
  const std::set<std::string> produced = ProducedNames(model.graph());
  for (const std::string& name : extra) {
    if (produced.count(name) == 0) {
      return Status::NotFound(model_path_for_messages.string() + ": no value named '" + name +
                              "' (no node, initializer or graph input of the main graph produces "
                              "it)");
    }
  }
  std::map<std::string, onnx::ValueInfoProto> types = DeclaredTypes(model.graph());
  std::set<std::string> untyped;
  for (const std::string& name : extra) {
    if (types.count(name) == 0) untyped.insert(name);
  }
  if (!untyped.empty()) AddInferredTypes(model, untyped, &types);
  for (const std::string& name : extra) {
    auto found = types.find(name);
    onnx::ValueInfoProto& output = outputs.emplace_back();
    if (found != types.end()) output = found->second;
    output.set_name(name);
  }
  return outputs;
}

}  // namespace

Result<bool> AddOutputs(onnx::ModelProto& model, const std::vector<std::string>& output_names,
                        const std::filesystem::path& model_path_for_messages) {
  CONVGATE_ASSIGN_OR_RETURN(std::vector<onnx::ValueInfoProto> outputs,
                            NewOutputs(model, output_names, model_path_for_messages));
  for (onnx::ValueInfoProto& output : outputs) {
    *model.mutable_graph()->add_output() = std::move(output);
  }
  return !outputs.empty();
}

Result<std::string> WithOutputs(const std::string& model_bytes,
                                const std::vector<std::string>& output_names,
                                const std::filesystem::path& model_path_for_messages) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model,
                            ParseModelProto(model_bytes, model_path_for_messages));
  CONVGATE_ASSIGN_OR_RETURN(bool added, AddOutputs(model, output_names, model_path_for_messages));
  if (!added) return model_bytes;
  std::string serialized;
  if (!model.SerializeToString(&serialized)) {
    return Status::Unimplemented(model_path_for_messages.string() +
                                 ": cannot serialize the model with extra outputs (protobuf's 2 "
                                 "GB limit)");
  }
  return serialized;
}

Result<std::string> OutputsSuffix(const std::filesystem::path& model_path,
                                  const std::vector<std::string>& output_names) {
  int64_t size = 0;
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelStructureFile(model_path, &size));
  CONVGATE_ASSIGN_OR_RETURN(std::vector<onnx::ValueInfoProto> outputs,
                            NewOutputs(model, output_names, model_path));
  // A message holding only graph.output: protobuf merges a repeated field's entries onto those
  // parsed before it and leaves every other field as it was.
  onnx::ModelProto suffix;
  for (onnx::ValueInfoProto& output : outputs) {
    *suffix.mutable_graph()->add_output() = std::move(output);
  }
  std::string serialized;
  if (!outputs.empty() && !suffix.SerializeToString(&serialized)) {
    return Status::Internal(model_path.string() + ": cannot serialize the extra outputs");
  }
  return serialized;
}

Result<std::string> WithOutputsReferencingWeights(const std::filesystem::path& model_path,
                                                  const std::vector<std::string>& output_names,
                                                  const std::string& weights_location) {
  CONVGATE_ASSIGN_OR_RETURN(ModelStructure structure, ReadModelStructure(model_path));
  onnx::GraphProto& graph = *structure.model.mutable_graph();
  for (size_t idx = 0; idx < structure.skipped.size(); ++idx) {
    CONVGATE_RETURN_IF_ERROR(
        ReferenceTensorData(model_path, weights_location, structure.skipped[idx],
                            *graph.mutable_initializer(static_cast<int>(idx))));
  }
  CONVGATE_ASSIGN_OR_RETURN(std::vector<onnx::ValueInfoProto> outputs,
                            NewOutputs(structure.model, output_names, model_path));
  for (onnx::ValueInfoProto& output : outputs) *graph.add_output() = std::move(output);
  std::string serialized;
  if (!structure.model.SerializeToString(&serialized)) {
    return Status::Internal(model_path.string() + ": cannot serialize the marked model");
  }
  return serialized;
}

Result<std::vector<std::string>> IntermediateNames(const std::string& model_bytes) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, "<model bytes>"));
  std::vector<std::string> names;
  for (const onnx::NodeProto& node : model.graph().node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty()) names.push_back(output);
    }
  }
  return names;
}

}  // namespace convgate::graph
