// The driver: load, apply the passes in order (checking the model after each), write.
#include <onnx/checker.h>

#include <exception>

#include "convgate/core/file_util.h"
#include "convgate/graph/internal/external_data.h"
#include "transform/legacy_inputs.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

namespace fs = std::filesystem;

Result<onnx::ModelProto> LoadModel(const fs::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    return Status::DataLoss(path.string() + ": not a parseable ONNX model with a graph");
  }
  // Weights in a data file stay there: a pass reads the ones it needs (ToTensor), and the
  // output gets a data file of its own (WriteModel).
  if (graph::HasExternalTensors(model)) {
    CONVGATE_RETURN_IF_ERROR(graph::AnchorExternalData(model, path));
  }
  return model;
}

// ONNX's checker verdict: "" when the model passes, else its message.
std::string CheckerError(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

Result<PassRecord> ApplyPass(const PassSpec& spec, onnx::ModelProto& model, bool check,
                             const fs::path& source,
                             const std::vector<onnx::ValueInfoProto>& legacy_inputs) {
  const PassInfo* info = FindPass(spec.name);
  if (info == nullptr) return Status::InvalidArgument("unknown pass '" + spec.name + "'");
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, info->make(spec.params));
  PassRecord record;
  record.spec = spec;
  record.signature = PassSignature(spec);
  record.preserves_computation = info->preserves_computation;
  record.action = info->action;
  PassContext context(spec.name, &record);
  Status applied = pass->Apply(model, context);
  if (!applied.ok()) {
    return Status(applied.code(),
                  source.string() + ": pass " + spec.name + ": " + applied.message());
  }
  // Checked only when the source passed: a pass should not be blamed for what it was given.
  std::string error;
  if (check && model.ir_version() >= 4) {
    error = CheckerError(model);
  } else if (check) {
    // An IR < 4 model is only valid with its initializer inputs in place: check a copy with them.
    onnx::ModelProto checked = model;
    ReattachLegacyInitializerInputs(checked, legacy_inputs);
    error = CheckerError(checked);
  }
  if (!error.empty()) {
    return Status::FailedPrecondition(source.string() + ": pass " + spec.name +
                                      " left a model ONNX's checker rejects: " + error);
  }
  return record;
}

}  // namespace

Result<TransformRecord> TransformModelFile(const fs::path& source, const fs::path& output,
                                           const std::vector<PassSpec>& passes) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, LoadModel(source));
  TransformRecord record;
  record.source = source;
  record.output = output;
  record.nodes_before = model.graph().node_size();
  const bool source_external = graph::HasExternalTensors(model);
  const bool check = CheckerError(model).empty();
  const std::vector<onnx::ValueInfoProto> inputs = DetachLegacyInitializerInputs(model);
  for (const PassSpec& spec : passes) {
    CONVGATE_ASSIGN_OR_RETURN(record.passes.emplace_back(),
                              ApplyPass(spec, model, check, source, inputs));
  }
  ReattachLegacyInitializerInputs(model, inputs);
  record.nodes_after = model.graph().node_size();
  if (source_external) {
    CONVGATE_RETURN_IF_ERROR(
        graph::WriteModelWithExternalData(model, output, graph::DataFileBeside(output)));
    return record;
  }
  CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(output, model.SerializeAsString()));
  return record;
}

Result<std::vector<std::string>> TransformedNodes(const fs::path& path,
                                                  const std::string& signature) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, LoadModel(path));
  const std::string marker = "convgate.transform: " + signature + " ";
  std::vector<std::string> nodes;
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.doc_string().find(marker) != std::string::npos) nodes.push_back(NodeLabel(node));
  }
  return nodes;
}

}  // namespace convgate::transform
