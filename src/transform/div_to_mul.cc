// div_to_mul: Div(X, C) with C a float constant (initializer or Constant node) without zeros
// becomes Mul(X, 1/C), the reciprocal computed in double and rounded once. Numerically
// approximate: x * round(1/c) is not always round(x / c). Constant nodes left unread are removed.
// Integer Div is left alone (it truncates) and so is a divisor holding 0 (x/0 and x*inf differ for
// x = 0 only in sign details, but a rewrite that cannot be exact everywhere is not worth the
// doubt).
#include <cmath>
#include <optional>

#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

// 1/c elementwise; nullopt when some element is 0 or not finite.
std::optional<Tensor> Reciprocal(const Tensor& divisor) {
  Tensor inverse = divisor.Clone();
  for (int64_t flat = 0; flat < inverse.num_elements(); ++flat) {
    const double value = divisor.GetDouble(flat);
    if (value == 0.0 || !std::isfinite(value)) return std::nullopt;
    inverse.SetDouble(flat, 1.0 / value);
  }
  return inverse;
}

class DivToMul : public Pass {
 public:
  Status Apply(onnx::ModelProto& model, PassContext& context) override {
    onnx::GraphProto& graph = *model.mutable_graph();
    UniqueNames names(graph);
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      onnx::NodeProto& node = *graph.mutable_node(idx);
      if (node.op_type() != "Div" || !node.domain().empty() || node.input_size() != 2) continue;
      const onnx::TensorProto* divisor = FindConstant(graph, node.input(1));
      if (divisor == nullptr || !IsFloatElemType(divisor->data_type())) continue;
      CONVGATE_ASSIGN_OR_RETURN(Tensor value, ToTensor(*divisor));
      std::optional<Tensor> inverse = Reciprocal(value);
      if (!inverse) continue;
      const std::string old_divisor = node.input(1);
      const std::string inverse_name = names.Make(old_divisor + "_reciprocal");
      CONVGATE_ASSIGN_OR_RETURN(*graph.add_initializer(), ToProto(*inverse, inverse_name));
      node.set_op_type("Mul");
      node.set_input(1, inverse_name);
      context.Changed(node, "Div by constant '" + old_divisor + "' -> Mul by its reciprocal '" +
                                inverse_name + "'");
    }
    for (const onnx::NodeProto& node : EraseUnreadConstants(graph)) {
      context.Removed(node, "not read by any node after the rewrite");
    }
    RemoveUnusedInitializers(graph);
    return Status::OK();
  }
};

}  // namespace

Result<std::unique_ptr<Pass>> MakeDivToMul(const Params&) {
  return std::unique_ptr<Pass>(new DivToMul());
}

}  // namespace convgate::transform
