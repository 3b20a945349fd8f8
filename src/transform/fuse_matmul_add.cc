// fuse_matmul_add: MatMul(A, W) followed only by Add(., bias) becomes Gemm(A, W, bias) when W is
// a 2-D float initializer [K, N], bias a float initializer of shape [N] or [1, N] (which Gemm's C
// broadcasts the same way Add does) and A is known to be 2-D (Gemm takes only matrices; ONNX shape
// inference tells). Numerically approximate: Gemm may add the bias inside its accumulation.
#include <unordered_set>

#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

bool IsPlain(const onnx::NodeProto& node, const char* op) {
  return node.op_type() == op && node.domain().empty();
}

bool IsFloatMatrix(const onnx::TensorProto* proto) {
  return proto != nullptr && IsFloatElemType(proto->data_type()) && proto->dims_size() == 2;
}

// The Add's other input when it is a bias Gemm can take for a [K, N] weight; "" otherwise.
std::string BiasInput(const onnx::GraphProto& graph, const onnx::NodeProto& add,
                      const std::string& matmul_output, const onnx::TensorProto& weight) {
  if (add.input_size() != 2) return "";
  const std::string& other = add.input(0) == matmul_output ? add.input(1) : add.input(0);
  if (other == matmul_output) return "";  // Add(x, x)
  const onnx::TensorProto* bias = FindInitializer(graph, other);
  if (bias == nullptr || bias->data_type() != weight.data_type()) return "";
  const int64_t n = weight.dims(1);
  const bool row = bias->dims_size() == 1 && bias->dims(0) == n;
  const bool matrix_row = bias->dims_size() == 2 && bias->dims(0) == 1 && bias->dims(1) == n;
  return row || matrix_row ? other : "";
}

class FuseMatMulAdd : public Pass {
 public:
  Status Apply(onnx::ModelProto& model, PassContext& context) override {
    const std::unordered_map<std::string, int> ranks = KnownRanks(model);
    onnx::GraphProto& graph = *model.mutable_graph();
    const std::unordered_map<std::string, int> uses = UseCounts(graph);
    const std::unordered_map<std::string, int> producers = Producers(graph);
    std::unordered_set<int> removed;
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      const onnx::NodeProto& add = graph.node(idx);
      if (!IsPlain(add, "Add") || add.input_size() != 2) continue;
      for (const std::string& input : add.input()) {
        auto producer = producers.find(input);
        if (producer == producers.end() || uses.at(input) != 1) continue;
        onnx::NodeProto& matmul = *graph.mutable_node(producer->second);
        if (Fuse(graph, ranks, matmul, add, context)) {
          removed.insert(idx);
          break;
        }
      }
    }
    EraseNodes(graph, removed);
    return Status::OK();
  }

 private:
  static bool Fuse(const onnx::GraphProto& graph, const std::unordered_map<std::string, int>& ranks,
                   onnx::NodeProto& matmul, const onnx::NodeProto& add, PassContext& context) {
    if (!IsPlain(matmul, "MatMul") || matmul.input_size() != 2) return false;
    const onnx::TensorProto* weight = FindInitializer(graph, matmul.input(1));
    if (!IsFloatMatrix(weight)) return false;
    auto rank = ranks.find(matmul.input(0));
    if (rank == ranks.end() || rank->second != 2) return false;
    const std::string bias = BiasInput(graph, add, matmul.output(0), *weight);
    if (bias.empty()) return false;
    const std::string old_output = matmul.output(0);
    NameIfUnnamed(matmul);
    matmul.set_op_type("Gemm");
    matmul.add_input(bias);
    matmul.set_output(0, add.output(0));
    context.Changed(matmul, "MatMul + Add '" + NodeLabel(add) + "' fused into Gemm with bias '" +
                                bias + "', output '" + add.output(0) + "' (was '" + old_output +
                                "')");
    context.Removed(add, "fused into Gemm '" + NodeLabel(matmul) + "'");
    return true;
  }
};

}  // namespace

Result<std::unique_ptr<Pass>> MakeFuseMatMulAdd(const Params&) {
  return std::unique_ptr<Pass>(new FuseMatMulAdd());
}

}  // namespace convgate::transform
