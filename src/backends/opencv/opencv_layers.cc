#include "backends/opencv/opencv_layers.h"

namespace convgate::backends {
namespace {

// The index of the first non-empty output: OpenCV names an unnamed node after it.
size_t FirstNamedOutput(const graph::NodeInfo& node) {
  for (size_t output_idx = 0; output_idx < node.outputs.size(); ++output_idx) {
    if (!node.outputs[output_idx].empty()) return output_idx;
  }
  return 0;
}

}  // namespace

OpenCvLayerNames::OpenCvLayerNames(std::vector<graph::NodeInfo> nodes) : nodes_(std::move(nodes)) {
  for (size_t node_idx = 0; node_idx < nodes_.size(); ++node_idx) {
    const std::vector<std::string>& outputs = nodes_[node_idx].outputs;
    for (size_t output_idx = 0; output_idx < outputs.size(); ++output_idx) {
      if (outputs[output_idx].empty()) continue;
      // A valid ONNX graph assigns each value once; on a malformed one, keep the first producer.
      producers_.try_emplace(outputs[output_idx], Producer{node_idx, output_idx});
    }
  }
}

Result<std::vector<std::string>> OpenCvLayerNames::CandidatesFor(const std::string& tensor) const {
  auto found = producers_.find(tensor);
  if (found == producers_.end()) {
    return Status::NotFound("no node of the graph produces a tensor named '" + tensor + "'");
  }
  const graph::NodeInfo& node = nodes_[found->second.node_idx];
  const size_t first = FirstNamedOutput(node);
  if (found->second.output_idx != first) {
    return Status::Unimplemented(
        "'" + tensor + "' is output " + std::to_string(found->second.output_idx) + " of " +
        DescribeProducer(tensor) + "; OpenCV DNN exposes only a layer's first output by name");
  }
  if (!node.name.empty()) return std::vector<std::string>{"onnx_node!" + node.name, node.name};
  return std::vector<std::string>{
      "onnx_node_output_" + std::to_string(first) + "!" + node.outputs[first], node.outputs[first]};
}

std::string OpenCvLayerNames::DescribeProducer(const std::string& tensor) const {
  auto found = producers_.find(tensor);
  if (found == producers_.end()) return "no node";
  const graph::NodeInfo& node = nodes_[found->second.node_idx];
  if (node.name.empty()) return "the unnamed " + node.op_type + " node producing '" + tensor + "'";
  return "node '" + node.name + "' (" + node.op_type + ")";
}

}  // namespace convgate::backends
