// IR version < 4 models list every initializer among the graph inputs too (the format required
// it), and ONNX Runtime treats them as constants there; from IR 4 on, an initializer that is also
// a graph input is an overridable default, which the passes leave alone (graph_edit.h). So for
// IR < 4 the driver takes those inputs out while the passes run and puts them back afterwards,
// for the initializers that remain and the ones the passes added (internal to src/transform).
#pragma once

#include <onnx/onnx_pb.h>

#include <vector>

namespace convgate::transform {

// The graph inputs as they were; for IR < 4 the initializer inputs are removed from the graph.
std::vector<onnx::ValueInfoProto> DetachLegacyInitializerInputs(onnx::ModelProto& model);

// For IR < 4: the graph inputs become `original` minus initializers no longer present, followed
// by an input for each initializer not among them (typed from its dtype and dims).
void ReattachLegacyInitializerInputs(onnx::ModelProto& model,
                                     const std::vector<onnx::ValueInfoProto>& original);

}  // namespace convgate::transform
