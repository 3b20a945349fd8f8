// Which OpenCV DNN layer computes a given ONNX tensor (no OpenCV headers needed).
//
// OpenCV 4.6's ONNX importer (onnx_importer.cpp, extractNodeName) names the layer of a node
//   "onnx_node!<node name>"                  when the node has a name (PyTorch exports name all);
//   "onnx_node_output_<i>!<output i>"        otherwise, i being its first non-empty output;
//   the bare node name, or output name,      when OPENCV_DNN_ONNX_USE_LEGACY_NAMES is set;
// and adds an Identity layer named after each graph output. A layer's default output pin is its
// first output, so only a node's first output can be fetched by name; its other outputs (Split,
// TopK indices, ...) are Unimplemented. Nodes the importer evaluates at load time (everything
// computed from constants) or rewrites together with their neighbours (its graph simplifier fuses
// e.g. Gelu, LayerNorm and Softmax patterns) have no layer: their outputs are NotFound at Run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/graph/nodes.h"

namespace convgate::backends {

class OpenCvLayerNames {
 public:
  OpenCvLayerNames() = default;
  explicit OpenCvLayerNames(std::vector<graph::NodeInfo> nodes);

  // The layer names that may hold `tensor`, most likely first (the importer's current naming,
  // then the legacy one). NotFound when no node of the main graph produces `tensor`;
  // Unimplemented when it is not the first output of its node. Messages name the tensor and node
  // but not the model (the caller adds it).
  Result<std::vector<std::string>> CandidatesFor(const std::string& tensor) const;

  // "node 'Conv_3' (Conv)" or "the unnamed Conv node producing 'y'", for messages.
  std::string DescribeProducer(const std::string& tensor) const;

 private:
  struct Producer {
    size_t node_idx = 0;
    size_t output_idx = 0;
  };
  std::vector<graph::NodeInfo> nodes_;
  std::map<std::string, Producer> producers_;
};

}  // namespace convgate::backends
