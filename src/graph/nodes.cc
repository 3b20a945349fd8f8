#include "convgate/graph/nodes.h"

#include "convgate/graph/internal/model_proto.h"
#include "graph/onnx_types.h"

namespace convgate::graph {

Result<std::vector<NodeInfo>> ListNodes(std::string_view model_bytes,
                                        const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, path));
  std::vector<NodeInfo> nodes;
  nodes.reserve(model.graph().node_size());
  for (const onnx::NodeProto& node : model.graph().node()) {
    NodeInfo info;
    info.name = node.name();
    info.op_type = IsDefaultDomain(node) ? node.op_type() : node.domain() + "." + node.op_type();
    info.inputs.assign(node.input().begin(), node.input().end());
    info.outputs.assign(node.output().begin(), node.output().end());
    nodes.push_back(std::move(info));
  }
  return nodes;
}

}  // namespace convgate::graph
