// A pipeline spec: several models wired into one graph (LEAPP's YAML description). Nodes are
// models with declared inputs and outputs; edges carry a node's output to another node's input
// within a step; feedback edges carry an output to an input at the next step, starting from an
// initial value. docs/guide.md ("Pipelines") documents the YAML; ParseSpec reads and checks what
// needs no model (keys, names, references, initial values' form); ValidateWiring (wiring.h) checks
// the graph once every node's declarations are known.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"

namespace convgate::pipeline {

// "node.tensor"; `node` empty for a pipeline input or output.
struct Endpoint {
  std::string node;
  std::string tensor;
  std::string ToString() const { return node.empty() ? tensor : node + "." + tensor; }
};

struct NodeSpec {
  std::string name;
  std::string model;    // a path (relative ones resolved against the spec's folder) or hf:// id
  std::string backend;  // empty: from the model's format
  std::string target;   // the converted model of this node; empty: none
  std::string target_backend;
  // Declared inputs and outputs, in the order the model takes and returns them. Required for
  // models that declare none (TorchScript: positional inputs, outputs output_0, ...); for ONNX
  // they may be left out and are then read from the model.
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  bool inputs_declared = false;
  bool outputs_declared = false;
  int line = 0;  // of the node's entry in the spec, for messages
};

// What a feedback input holds before the first step: zeros of a dtype and shape, or a tensor read
// from a file (.npy; .npz or .safetensors with `tensor` naming the member, or holding one).
struct InitialValue {
  bool zeros = false;
  std::optional<DType> dtype;    // zeros
  std::vector<int64_t> shape;    // zeros
  std::filesystem::path file;    // a file
  std::string tensor;            // the member of an .npz / .safetensors file
  std::string Describe() const;  // "zeros float32[1, 16]" or "h0.npy"
};

struct EdgeSpec {
  Endpoint from;  // node output, or (node empty) a pipeline input
  Endpoint to;    // node input, or (node empty) a pipeline output
  bool feedback = false;
  std::optional<InitialValue> initial;  // feedback edges only
  int line = 0;
  std::string ToString() const;  // "features.feats -> embedding.feats (feedback)"
};

struct Spec {
  std::filesystem::path path;  // the YAML file
  std::string name;
  std::vector<NodeSpec> nodes;
  std::vector<std::string> inputs;   // pipeline input names
  std::vector<std::string> outputs;  // pipeline output names
  // Every connection: pipeline inputs to node inputs, node outputs to node inputs (in-step and
  // feedback) and node outputs to pipeline outputs, in the order the spec lists them.
  std::vector<EdgeSpec> edges;

  const NodeSpec* FindNode(const std::string& name) const;
};

// Reads and parses a spec. InvalidArgument naming the file, the line and the problem for anything
// malformed: an unknown key, a missing name or model, a duplicate node, an endpoint that is not
// "node.tensor" or names no node, a feedback edge with no initial value ("feedback edge
// rnn.h_out -> rnn.h_in has no initial value"), an initial value that is neither zeros with a
// dtype and shape nor a file. NotFound naming the file when it does not exist.
Result<Spec> ParseSpec(const std::filesystem::path& path);
// The same from text (tests); `path` only names it in messages and anchors relative paths.
Result<Spec> ParseSpecText(const std::string& text, const std::filesystem::path& path);

// The declaration named `name`, or null.
const TensorInfo* FindDecl(const std::vector<TensorInfo>& decls, const std::string& name);

// "float32[batch, 8]" for messages: what one side of an edge declares.
std::string DescribeDecl(const TensorInfo& info);

}  // namespace convgate::pipeline
