// The nodes of an ONNX model's main graph, for backends that name their layers after ONNX nodes
// (OpenCV DNN) and must map a tensor name to the node that produced it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::graph {

struct NodeInfo {
  std::string name;                  // may be empty: ONNX does not require node names
  std::string op_type;               // "Conv"; "<domain>.<op>" outside the default domain
  std::vector<std::string> outputs;  // as written; "" marks an omitted optional output
  // As written; "" marks an omitted optional input. Last, so brace-initialized {name, op_type,
  // outputs} stays valid.
  std::vector<std::string> inputs = {};
  // An OpenVINO IR layer only: the source nodes OpenVINO merged into it, as its rt_info lists
  // them (`fused_names`, or `originalLayersNames` in an execution graph); empty when it lists
  // none (OpenVINO 2026's converters write no rt_info on layers).
  std::vector<std::string> fused = {};
};

// The main graph's nodes in file order (ONNX requires topological order). Subgraph bodies
// (If/Loop/Scan) are not listed. Errors as graph::SummarizeOnnxModelBytes (DataLoss naming
// `path` when the bytes are not a model).
Result<std::vector<NodeInfo>> ListNodes(std::string_view model_bytes,
                                        const std::filesystem::path& path);

}  // namespace convgate::graph
