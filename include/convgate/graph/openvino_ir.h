// The nodes of an OpenVINO IR (.xml), read from the XML itself, for per-node validation of an IR
// against its ONNX source: OpenVINO keeps the ONNX tensor names as the IR's output tensor names
// (the `names` of an output port), so an IR node's outputs are matched to the source's tensors by
// name as ONNX nodes' are.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/graph/nodes.h"

namespace convgate::graph {

// Whether `path` names an OpenVINO IR (by its .xml extension, as the backends are chosen).
bool IsOpenVinoIr(const std::filesystem::path& path);

// The main graph's layers in file order (the IR serializer writes them topologically), without
// Parameter, Const and Result layers (ONNX lists graph inputs, initializers and outputs as no
// nodes either) and without the bodies of TensorIterator/Loop/If. NodeInfo::name is the layer's
// name, op_type its type ("Convolution"), outputs every tensor name of every output port (a port
// may carry several: OpenVINO merges the names of tensors it fused) and inputs the first tensor
// name of the port feeding each input ("" when that tensor has no name), fused the source nodes
// the layer's rt_info says were merged into it (`fused_names`, as OpenVINO up to 2022 wrote it;
// `originalLayersNames` of an execution graph). DataLoss naming `path` when `xml` is not an IR.
Result<std::vector<NodeInfo>> ListOpenVinoIrNodes(std::string_view xml,
                                                  const std::filesystem::path& path);

}  // namespace convgate::graph
