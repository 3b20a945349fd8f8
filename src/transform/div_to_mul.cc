// div_to_mul: Div(X, C) with C a float constant (constants.h: initializer, Constant node, Identity
// over either) without zeros becomes Mul(X, 1/C), the reciprocal computed in double and rounded
// once. Numerically approximate: x * round(1/c) is not always round(x / c). Constant and Identity
// nodes left unread are removed; every Div left alone is recorded with the reason.
// Integer Div is left alone (it truncates) and so is a divisor holding 0 (x/0 and x*inf differ for
// x = 0 only in sign details, but a rewrite that cannot be exact everywhere is not worth the
// doubt).
#include <cmath>
#include <optional>

#include "transform/constants.h"
#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

constexpr char kKind[] = "Div";

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
    context.Expect(kKind);
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      onnx::NodeProto& node = *graph.mutable_node(idx);
      if (node.op_type() != kKind || !node.domain().empty() || node.input_size() != 2) continue;
      context.Candidate(kKind);
      const ConstantLookup constant = LookUpConstant(graph, node.input(1));
      if (!constant) {
        context.Skipped(kKind, node, "its divisor is not a constant", constant.why_not);
        continue;
      }
      if (!IsFloatElemType(constant.proto()->data_type())) {
        context.Skipped(kKind, node, "its divisor is not float (integer Div truncates)",
                        "'" + node.input(1) + "' is " +
                            onnx::TensorProto::DataType_Name(constant.proto()->data_type()));
        continue;
      }
      CONVGATE_ASSIGN_OR_RETURN(Tensor divisor, ToTensor(*constant.proto(), node.input(1)));
      std::optional<Tensor> inverse = Reciprocal(divisor);
      if (!inverse) {
        context.Skipped(kKind, node, "its divisor holds 0 or a non-finite value",
                        "'" + node.input(1) + "'");
        continue;
      }
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
