// Loading a pipeline's models (LEAPP's InferenceManager "loads all referenced JIT/ONNX models")
// and completing each node's declarations from them.
#include <algorithm>

#include "convgate/core/file_util.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/safetensors.h"
#include "pipeline/engine.h"

namespace convgate::pipeline::internal {
namespace {

namespace fs = std::filesystem;

bool AllNamed(const std::vector<TensorInfo>& decls, const std::vector<TensorInfo>& model) {
  return std::all_of(decls.begin(), decls.end(), [&](const TensorInfo& decl) {
    return std::any_of(model.begin(), model.end(),
                       [&](const TensorInfo& info) { return info.name == decl.name; });
  });
}

// The spec's declarations against an ONNX model's own: names and dtypes must agree, else the
// wiring would be checked against a fiction.
Status CheckDecls(const NodeSpec& node, const std::vector<TensorInfo>& decls,
                  const std::vector<TensorInfo>& model, const std::string& kind) {
  for (const TensorInfo& decl : decls) {
    const auto it = std::find_if(model.begin(), model.end(),
                                 [&](const TensorInfo& info) { return info.name == decl.name; });
    if (it == model.end()) {
      return Status::InvalidArgument("node '" + node.name + "' declares " + kind + " '" +
                                     decl.name + "', which " + node.model + " does not have");
    }
    if (it->dtype.has_value() && decl.dtype.has_value() && *it->dtype != *decl.dtype) {
      return Status::InvalidArgument("node '" + node.name + "' declares " + kind + " '" +
                                     decl.name + "' " + DescribeDecl(decl) + ", but " + node.model +
                                     " declares " + DescribeDecl(*it));
    }
  }
  return Status::OK();
}

// One direction (inputs or outputs) of a node: what the spec left out comes from the model; a
// model that names nothing (TorchScript: positional inputs, outputs output_0, ...) needs the spec.
Status CompleteDirection(const NodeSpec& node, bool declared, std::vector<TensorInfo>& decls,
                         const std::vector<TensorInfo>& model, bool positional,
                         const std::string& kind) {
  if (declared) return positional ? Status::OK() : CheckDecls(node, decls, model, kind);
  if (positional || model.empty()) {
    return Status::InvalidArgument(
        "node '" + node.name + "': " + node.model + " does not declare its " + kind +
        "s' names, dtypes and shapes (TorchScript): list them under `" + kind + "s:` in the spec");
  }
  decls = model;
  return Status::OK();
}

Status CompleteDecls(NodeSpec& node, const Signature& signature) {
  CONVGATE_RETURN_IF_ERROR(CompleteDirection(node, node.inputs_declared, node.inputs,
                                             signature.inputs, signature.positional_inputs,
                                             "input"));
  return CompleteDirection(node, node.outputs_declared, node.outputs, signature.outputs,
                           signature.positional_outputs, "output");
}

void SetPositional(LoadedSide& side, const NodeSpec& node) {
  const Signature& signature = side.loaded.model->signature();
  side.positional_inputs = signature.positional_inputs || !AllNamed(node.inputs, signature.inputs);
  side.positional_outputs =
      signature.positional_outputs || !AllNamed(node.outputs, signature.outputs);
}

bool IsHf(const std::string& path) { return path.rfind("hf://", 0) == 0; }

std::string Resolve(const Spec& spec, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute() || IsHf(path)) return path;
  return (spec.path.parent_path() / path).string();
}

// An hf:// id fetched into the hub cache (PipelineOptions::fetch_hf); other paths stay.
Status FetchIfHf(std::string& path, const PipelineOptions& options) {
  if (!IsHf(path)) return Status::OK();
  if (!options.fetch_hf) return Status::Unimplemented(path + ": hf:// ids are not fetched here");
  CONVGATE_ASSIGN_OR_RETURN(fs::path local, options.fetch_hf(path));
  path = local.string();
  return Status::OK();
}

// --to: the node's source converted into a target with the existing conversions and cache.
Status ConvertNode(NodeSpec& node, LoadedNode& loaded, const convert::ConversionRequest& base) {
  convert::ConversionRequest request = base;
  request.source = node.model;
  request.output.clear();
  request.use_cache = true;
  CONVGATE_ASSIGN_OR_RETURN(convert::ConversionRecord record, convert::Convert(request, nullptr));
  node.target = record.output_path;
  loaded.conversion_hold = record.output_hold;
  loaded.converted = true;
  return Status::OK();
}

}  // namespace

Result<LoadedSide> LoadSide(const std::string& path, const std::string& backend,
                            const std::string& role, const PipelineOptions& options) {
  CONVGATE_ASSIGN_OR_RETURN(session::ResolvedSide resolved, session::ResolveSide(path, backend));
  if (resolved.kind != session::SideKind::kModel) {
    return Status::InvalidArgument(path + " is saved outputs, not a model");
  }
  LoadedSide side;
  side.record.role = role;
  side.record.path = path;
  side.record.kind = "model";
  side.record.format = resolved.format;
  side.record.backend = resolved.backend;
  CONVGATE_ASSIGN_OR_RETURN(
      side.loaded, session::LoadModel(resolved, *options.backend_factory,
                                      session::SideLoadOptions(options.data, {}), side.record));
  return side;
}

std::vector<LoadedNode> LoadNodes(Spec& spec, const PipelineOptions& options,
                                  std::optional<gate::GateError>& error) {
  std::vector<LoadedNode> nodes(spec.nodes.size());
  for (size_t idx = 0; idx < spec.nodes.size() && !error; ++idx) {
    NodeSpec& node = spec.nodes[idx];
    node.model = Resolve(spec, node.model);
    node.target = Resolve(spec, node.target);
    for (std::string* path : {&node.model, &node.target}) {
      const Status fetched = FetchIfHf(*path, options);
      if (!fetched.ok()) error = gate::GateError{gate::Stage::kLoad, fetched};
    }
    if (error) break;
    Result<LoadedSide> source = LoadSide(node.model, node.backend, "source", options);
    if (!source.ok()) {
      error = gate::GateError{gate::Stage::kLoad,
                              source.status().WithContext("node '" + node.name + "'")};
      break;
    }
    nodes[idx].source = std::move(source).value();
    Status decls = CompleteDecls(node, nodes[idx].source.loaded.model->signature());
    if (!decls.ok()) {
      error = gate::GateError{gate::Stage::kFlags, decls.WithContext(spec.path.string())};
      break;
    }
    SetPositional(nodes[idx].source, node);
    if (node.target.empty() && options.conversion.has_value()) {
      Status converted = ConvertNode(node, nodes[idx], *options.conversion);
      if (!converted.ok()) {
        error = gate::GateError{
            gate::Stage::kConvert,
            converted.WithContext("node '" + node.name + "' --to " + options.conversion->kind)};
        break;
      }
    }
    if (node.target.empty()) continue;
    Result<LoadedSide> target = LoadSide(node.target, node.target_backend, "target", options);
    if (!target.ok()) {
      error = gate::GateError{gate::Stage::kLoad,
                              target.status().WithContext("node '" + node.name + "' target")};
      break;
    }
    nodes[idx].target = std::move(target).value();
    SetPositional(*nodes[idx].target, node);
  }
  return nodes;
}

Result<Tensor> ReadTensorFile(const fs::path& path, const std::string& member,
                              const Limits& limits) {
  const std::string ext = path.extension().string();
  if (ext == ".npy") return io::ReadNpy(path, limits);
  TensorMap tensors;
  if (ext == ".npz") {
    CONVGATE_ASSIGN_OR_RETURN(tensors, io::ReadNpz(path, limits));
  } else if (ext == ".safetensors") {
    CONVGATE_ASSIGN_OR_RETURN(io::SafetensorsFile file, io::ReadSafetensors(path, limits));
    tensors = std::move(file.tensors);
  } else {
    return Status::InvalidArgument(path.string() +
                                   ": a value must be an .npy, .npz or .safetensors");
  }
  if (!member.empty()) {
    Tensor* found = tensors.Find(member);
    if (found == nullptr) {
      return Status::NotFound(path.string() + " has no tensor '" + member + "' (it has " +
                              std::to_string(tensors.size()) + ")");
    }
    return std::move(*found);
  }
  if (tensors.size() != 1) {
    return Status::InvalidArgument(path.string() + " holds " + std::to_string(tensors.size()) +
                                   " tensors: name the one to use");
  }
  return std::move(tensors[0].tensor);
}

}  // namespace convgate::pipeline::internal
