// Parsing the pipeline YAML (docs/guide.md, "Pipelines"). Only the form is checked here; how nodes
// fit together is wiring.cc's, once the models have said what they declare.
#include <yaml-cpp/yaml.h>

#include <set>

#include "convgate/core/file_util.h"
#include "convgate/core/join.h"
#include "convgate/pipeline/spec.h"

namespace convgate::pipeline {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kTopKeys = {"name", "nodes", "inputs", "outputs", "edges", "feedback"};
const std::set<std::string> kNodeKeys = {"name",   "model",   "backend",       "target",
                                         "inputs", "outputs", "target_backend"};
const std::set<std::string> kTensorKeys = {"name", "dtype", "shape"};
const std::set<std::string> kEdgeKeys = {"from", "to"};
const std::set<std::string> kFeedbackKeys = {"from", "to", "initial"};
const std::set<std::string> kInitialKeys = {"zeros", "dtype", "shape", "file", "tensor"};
const std::set<std::string> kInputKeys = {"name", "to"};
const std::set<std::string> kOutputKeys = {"name", "from"};

// Errors name the spec and the line: "pipe.yaml:12: ...".
class Context {
 public:
  explicit Context(fs::path path) : path_(std::move(path)) {}
  Status Error(const YAML::Node& node, const std::string& message) const {
    const int line = node.IsDefined() ? node.Mark().line + 1 : 0;
    std::string text = path_.string();
    if (line > 0) text += ":" + std::to_string(line);
    return Status::InvalidArgument(text + ": " + message);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

Status CheckKeys(const Context& ctx, const YAML::Node& node, const std::set<std::string>& keys,
                 const std::string& what) {
  if (!node.IsMap()) return ctx.Error(node, what + " must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (keys.count(key) == 0) {
      return ctx.Error(entry.first,
                       what + ": unknown key '" + key + "' (known: " + JoinComma(keys) + ")");
    }
  }
  return Status::OK();
}

Result<std::string> Scalar(const Context& ctx, const YAML::Node& node, const std::string& what) {
  if (!node.IsDefined() || node.IsNull()) return ctx.Error(node, what + " is missing");
  if (!node.IsScalar()) return ctx.Error(node, what + " must be a single value");
  return node.as<std::string>();
}

Result<Endpoint> ParseEndpoint(const Context& ctx, const YAML::Node& node,
                               const std::string& what) {
  CONVGATE_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, node, what));
  const size_t dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == text.size()) {
    return ctx.Error(node, what + " '" + text + "' is not NODE.TENSOR");
  }
  return Endpoint{text.substr(0, dot), text.substr(dot + 1)};
}

Result<Dim> ParseDim(const Context& ctx, const YAML::Node& node) {
  if (node.IsNull()) return Dim::Unknown();
  const std::string text = node.as<std::string>();
  if (text == "?") return Dim::Unknown();
  int64_t value = 0;
  if (YAML::convert<int64_t>::decode(node, value)) {
    if (value < 0) return ctx.Error(node, "dim " + text + " is negative");
    return Dim::Fixed(value);
  }
  return Dim::Symbolic(text);
}

Result<std::vector<Dim>> ParseDims(const Context& ctx, const YAML::Node& node) {
  if (!node.IsSequence()) return ctx.Error(node, "shape must be a list such as [batch, 16]");
  std::vector<Dim> dims;
  for (const auto& dim : node) {
    CONVGATE_ASSIGN_OR_RETURN(Dim parsed, ParseDim(ctx, dim));
    dims.push_back(std::move(parsed));
  }
  return dims;
}

Result<DType> ParseDTypeField(const Context& ctx, const YAML::Node& node) {
  CONVGATE_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, node, "dtype"));
  std::optional<DType> dtype = ParseDType(text);
  if (!dtype.has_value()) return ctx.Error(node, "unknown dtype '" + text + "'");
  return *dtype;
}

Result<TensorInfo> ParseTensor(const Context& ctx, const YAML::Node& node,
                               const std::string& what) {
  CONVGATE_RETURN_IF_ERROR(CheckKeys(ctx, node, kTensorKeys, what));
  TensorInfo info;
  CONVGATE_ASSIGN_OR_RETURN(info.name, Scalar(ctx, node["name"], what + " name"));
  CONVGATE_ASSIGN_OR_RETURN(DType dtype, ParseDTypeField(ctx, node["dtype"]));
  info.dtype = dtype;
  info.type_name = std::string(DTypeName(dtype));
  if (node["shape"].IsDefined()) {
    CONVGATE_ASSIGN_OR_RETURN(info.shape, ParseDims(ctx, node["shape"]));
    info.has_shape = true;
  }
  return info;
}

Result<std::vector<TensorInfo>> ParseTensors(const Context& ctx, const YAML::Node& node,
                                             const std::string& what) {
  if (!node.IsSequence()) return ctx.Error(node, what + " must be a list");
  std::vector<TensorInfo> tensors;
  std::set<std::string> seen;
  for (const auto& entry : node) {
    CONVGATE_ASSIGN_OR_RETURN(TensorInfo info, ParseTensor(ctx, entry, what));
    if (!seen.insert(info.name).second) {
      return ctx.Error(entry, what + " '" + info.name + "' is declared twice");
    }
    tensors.push_back(std::move(info));
  }
  return tensors;
}

Result<NodeSpec> ParseNode(const Context& ctx, const YAML::Node& node) {
  CONVGATE_RETURN_IF_ERROR(CheckKeys(ctx, node, kNodeKeys, "node"));
  NodeSpec spec;
  spec.line = LineOf(node);
  CONVGATE_ASSIGN_OR_RETURN(spec.name, Scalar(ctx, node["name"], "node name"));
  if (spec.name.find('.') != std::string::npos) {
    return ctx.Error(node["name"], "node name '" + spec.name + "' contains '.'");
  }
  const std::string what = "node '" + spec.name + "'";
  CONVGATE_ASSIGN_OR_RETURN(spec.model, Scalar(ctx, node["model"], what + " model"));
  if (node["backend"].IsDefined()) {
    CONVGATE_ASSIGN_OR_RETURN(spec.backend, Scalar(ctx, node["backend"], what + " backend"));
  }
  if (node["target"].IsDefined()) {
    CONVGATE_ASSIGN_OR_RETURN(spec.target, Scalar(ctx, node["target"], what + " target"));
  }
  if (node["target_backend"].IsDefined()) {
    CONVGATE_ASSIGN_OR_RETURN(spec.target_backend,
                              Scalar(ctx, node["target_backend"], what + " target_backend"));
  }
  if (node["inputs"].IsDefined()) {
    CONVGATE_ASSIGN_OR_RETURN(spec.inputs, ParseTensors(ctx, node["inputs"], what + " input"));
    spec.inputs_declared = true;
  }
  if (node["outputs"].IsDefined()) {
    CONVGATE_ASSIGN_OR_RETURN(spec.outputs, ParseTensors(ctx, node["outputs"], what + " output"));
    spec.outputs_declared = true;
  }
  return spec;
}

Result<InitialValue> ParseInitial(const Context& ctx, const YAML::Node& node) {
  CONVGATE_RETURN_IF_ERROR(CheckKeys(ctx, node, kInitialKeys, "initial value"));
  InitialValue initial;
  if (node["file"].IsDefined()) {
    if (node["zeros"].IsDefined()) {
      return ctx.Error(node, "initial value: give either zeros or file, not both");
    }
    CONVGATE_ASSIGN_OR_RETURN(std::string file, Scalar(ctx, node["file"], "initial file"));
    initial.file = fs::path(file).is_absolute() ? fs::path(file) : ctx.path().parent_path() / file;
    if (node["tensor"].IsDefined()) {
      CONVGATE_ASSIGN_OR_RETURN(initial.tensor, Scalar(ctx, node["tensor"], "initial tensor"));
    }
    return initial;
  }
  if (!node["zeros"].IsDefined() || !node["zeros"].as<bool>(false)) {
    return ctx.Error(node, "initial value needs `zeros: true` with dtype and shape, or `file:`");
  }
  initial.zeros = true;
  CONVGATE_ASSIGN_OR_RETURN(initial.dtype, ParseDTypeField(ctx, node["dtype"]));
  if (!node["shape"].IsDefined()) return ctx.Error(node, "zeros initial value needs a shape");
  CONVGATE_ASSIGN_OR_RETURN(std::vector<Dim> dims, ParseDims(ctx, node["shape"]));
  for (const Dim& dim : dims) {
    if (!dim.is_fixed()) return ctx.Error(node["shape"], "zeros need a fixed shape");
    initial.shape.push_back(dim.value);
  }
  return initial;
}

Result<std::vector<std::string>> Targets(const Context& ctx, const YAML::Node& node) {
  std::vector<std::string> targets;
  if (node.IsSequence()) {
    for (const auto& entry : node) {
      CONVGATE_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, entry, "to"));
      targets.push_back(std::move(text));
    }
    return targets;
  }
  CONVGATE_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, node, "to"));
  targets.push_back(std::move(text));
  return targets;
}

Status ParseInputs(const Context& ctx, const YAML::Node& node, Spec& spec) {
  if (!node.IsDefined()) return Status::OK();
  if (!node.IsSequence()) return ctx.Error(node, "inputs must be a list");
  for (const auto& entry : node) {
    CONVGATE_RETURN_IF_ERROR(CheckKeys(ctx, entry, kInputKeys, "pipeline input"));
    CONVGATE_ASSIGN_OR_RETURN(std::string name, Scalar(ctx, entry["name"], "pipeline input name"));
    spec.inputs.push_back(name);
    CONVGATE_ASSIGN_OR_RETURN(std::vector<std::string> targets, Targets(ctx, entry["to"]));
    for (size_t idx = 0; idx < targets.size(); ++idx) {
      const YAML::Node at = entry["to"].IsSequence() ? entry["to"][idx] : entry["to"];
      EdgeSpec edge;
      edge.from = Endpoint{"", name};
      CONVGATE_ASSIGN_OR_RETURN(edge.to,
                                ParseEndpoint(ctx, at, "pipeline input '" + name + "' to"));
      edge.line = LineOf(at);
      spec.edges.push_back(std::move(edge));
    }
  }
  return Status::OK();
}

Status ParseOutputs(const Context& ctx, const YAML::Node& node, Spec& spec) {
  if (!node.IsDefined()) return ctx.Error(node, "outputs are missing: a pipeline needs one");
  if (!node.IsSequence()) return ctx.Error(node, "outputs must be a list");
  std::set<std::string> names;  // so the run collects a step's outputs without a search each
  for (const auto& entry : node) {
    CONVGATE_RETURN_IF_ERROR(CheckKeys(ctx, entry, kOutputKeys, "pipeline output"));
    CONVGATE_ASSIGN_OR_RETURN(std::string name, Scalar(ctx, entry["name"], "pipeline output name"));
    if (!names.insert(name).second) {
      return ctx.Error(entry, "pipeline output '" + name + "' is declared twice");
    }
    spec.outputs.push_back(name);
    EdgeSpec edge;
    CONVGATE_ASSIGN_OR_RETURN(
        edge.from, ParseEndpoint(ctx, entry["from"], "pipeline output '" + name + "' from"));
    edge.to = Endpoint{"", name};
    edge.line = LineOf(entry);
    spec.edges.push_back(std::move(edge));
  }
  return Status::OK();
}

Status ParseEdges(const Context& ctx, const YAML::Node& node, bool feedback, Spec& spec) {
  if (!node.IsDefined()) return Status::OK();
  const std::string what = feedback ? "feedback edge" : "edge";
  if (!node.IsSequence()) return ctx.Error(node, what + "s must be a list");
  for (const auto& entry : node) {
    CONVGATE_RETURN_IF_ERROR(CheckKeys(ctx, entry, feedback ? kFeedbackKeys : kEdgeKeys, what));
    EdgeSpec edge;
    edge.feedback = feedback;
    edge.line = LineOf(entry);
    CONVGATE_ASSIGN_OR_RETURN(edge.from, ParseEndpoint(ctx, entry["from"], what + " from"));
    CONVGATE_ASSIGN_OR_RETURN(edge.to, ParseEndpoint(ctx, entry["to"], what + " to"));
    if (feedback && !entry["initial"].IsDefined()) {
      return ctx.Error(entry, "feedback edge " + edge.ToString() +
                                  " has no initial value: give `initial: {zeros: true, dtype: "
                                  "..., shape: [...]}` or `initial: {file: ...}`");
    }
    if (feedback) {
      CONVGATE_ASSIGN_OR_RETURN(edge.initial, ParseInitial(ctx, entry["initial"]));
    }
    spec.edges.push_back(std::move(edge));
  }
  return Status::OK();
}

Status CheckEndpoints(const Context& ctx, const Spec& spec) {
  for (const EdgeSpec& edge : spec.edges) {
    for (const Endpoint* end : {&edge.from, &edge.to}) {
      if (!end->node.empty() && spec.FindNode(end->node) == nullptr) {
        return Status::InvalidArgument(ctx.path().string() + ":" + std::to_string(edge.line) +
                                       ": " + edge.ToString() + ": no node is named '" + end->node +
                                       "'");
      }
    }
  }
  return Status::OK();
}

Status ParseNodes(const Context& ctx, const YAML::Node& node, Spec& spec) {
  if (!node.IsSequence() || node.size() == 0) {
    return ctx.Error(node, "nodes must be a non-empty list");
  }
  for (const auto& entry : node) {
    CONVGATE_ASSIGN_OR_RETURN(NodeSpec parsed, ParseNode(ctx, entry));
    if (spec.FindNode(parsed.name) != nullptr) {
      return ctx.Error(entry, "node '" + parsed.name + "' is declared twice");
    }
    spec.nodes.push_back(std::move(parsed));
  }
  return Status::OK();
}

Result<Spec> ParseRoot(const Context& ctx, const YAML::Node& root) {
  CONVGATE_RETURN_IF_ERROR(CheckKeys(ctx, root, kTopKeys, "pipeline"));
  Spec spec;
  spec.path = ctx.path();
  spec.name =
      root["name"].IsDefined() ? root["name"].as<std::string>() : ctx.path().stem().string();
  CONVGATE_RETURN_IF_ERROR(ParseNodes(ctx, root["nodes"], spec));
  CONVGATE_RETURN_IF_ERROR(ParseInputs(ctx, root["inputs"], spec));
  CONVGATE_RETURN_IF_ERROR(ParseOutputs(ctx, root["outputs"], spec));
  CONVGATE_RETURN_IF_ERROR(ParseEdges(ctx, root["edges"], false, spec));
  CONVGATE_RETURN_IF_ERROR(ParseEdges(ctx, root["feedback"], true, spec));
  CONVGATE_RETURN_IF_ERROR(CheckEndpoints(ctx, spec));
  return spec;
}

}  // namespace

Result<Spec> ParseSpecText(const std::string& text, const fs::path& path) {
  Context ctx(path);
  try {
    return ParseRoot(ctx, YAML::Load(text));
  } catch (const YAML::Exception& error) {
    return Status::InvalidArgument(path.string() + ":" + std::to_string(error.mark.line + 1) +
                                   ": not valid YAML: " + error.msg);
  }
}

Result<Spec> ParseSpec(const fs::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseSpecText(text, path);
}

}  // namespace convgate::pipeline
