// The one way every pass reads a constant value by name (internal to src/transform). A value is a
// constant when it is
//   - an initializer that no graph input overrides: from IR 4 on, an initializer that is also a
//     graph input is an overridable default (IR < 4 initializer inputs are detached by
//     legacy_inputs.h before the passes run, so there they count as constants);
//   - the output of a Constant node: its `value`, `value_float(s)` or `value_int(s)` attribute
//     (exporters such as paddle2onnx store every weight this way). `sparse_value` and the string
//     attributes are not read: no pass rewrites them;
//   - the output of an Identity whose input is a constant, through chains of them (PyTorch exports
//     read shared or renamed weights through Identity nodes).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::transform {

struct ConstantLookup {
  // The constant's tensor, or null when the value is not a constant. Its `name` field is whatever
  // the source stored (a Constant's tensor often has none): callers name what they write.
  const onnx::TensorProto* proto() const { return owned ? &*owned : borrowed; }
  explicit operator bool() const { return proto() != nullptr; }

  // Why the value is not a constant, naming what produces it: "'w' is computed by Relu 'r'",
  // "'w' is a graph input", "'w' comes through Identity 'i' from 'x', a graph input".
  std::string why_not;
  // Main-graph indices of the Constant and Identity nodes the value was read through.
  std::vector<int> nodes;

  // Points into the graph (initializers, Constant `value`); valid until the graph changes.
  const onnx::TensorProto* borrowed = nullptr;
  // Built from value_float(s) / value_int(s).
  std::optional<onnx::TensorProto> owned;
};

// Looks `name` up in the main graph of `graph` as described above.
ConstantLookup LookUpConstant(const onnx::GraphProto& graph, const std::string& name);

// LookUpConstant converted to a Tensor: nullopt when the value is not a constant, with the reason
// in `*why_not` when it is given. Errors name the tensor (external data, unsupported types).
Result<std::optional<Tensor>> ReadConstant(const onnx::GraphProto& graph, const std::string& name,
                                           std::string* why_not = nullptr);

// Removes the main-graph Constant nodes, and Identity nodes over constants, whose output nothing
// reads (and that are not graph outputs), repeating until none is left: removing an Identity can
// leave the Constant it read unread. Returns them, in removal order, so the pass can record them.
std::vector<onnx::NodeProto> EraseUnreadConstants(onnx::GraphProto& graph);

}  // namespace convgate::transform
