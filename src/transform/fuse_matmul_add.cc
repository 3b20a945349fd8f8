// fuse_matmul_add: MatMul(A, W) followed only by Add(., bias) becomes Gemm(A, W, bias) when W is
// a 2-D float constant [K, N] (constants.h: initializer, Constant node, Identity over either), bias
// a constant of W's dtype and shape [N] or [1, N] (which Gemm's C broadcasts the same way Add
// does) and A is known to be 2-D (Gemm takes only matrices; ONNX shape inference tells). Gemm
// reads W and the bias by the same names, so Constant nodes stay. Every MatMul left alone is
// recorded with the reason. Numerically approximate: Gemm may add the bias inside its
// accumulation.
#include <unordered_set>

#include "transform/constants.h"
#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

constexpr char kKind[] = "MatMul";

// Why a candidate is left alone (`reason` shared by every node skipped the same way, `detail`
// about this one); an empty reason means it was fused.
struct Skip {
  std::string reason;
  std::string detail;
};

bool IsPlain(const onnx::NodeProto& node, const char* op) {
  return node.op_type() == op && node.domain().empty();
}

std::string Describe(const onnx::TensorProto& proto) {
  std::string dims;
  for (int64_t dim : proto.dims()) dims += (dims.empty() ? "" : ",") + std::to_string(dim);
  return onnx::TensorProto::DataType_Name(proto.data_type()) + "[" + dims + "]";
}

// Main-graph readers of each value, by node index.
std::unordered_map<std::string, std::vector<int>> Readers(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, std::vector<int>> readers;
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    for (const std::string& input : graph.node(idx).input()) readers[input].push_back(idx);
  }
  return readers;
}

// The Add that alone reads the MatMul's output, or -1 with `skip` saying why there is none.
int SoleAddReader(const onnx::GraphProto& graph, const std::string& output,
                  const std::unordered_map<std::string, int>& uses,
                  const std::unordered_map<std::string, std::vector<int>>& readers, Skip& skip) {
  const std::string reason = "its output is not read by one Add alone";
  if (IsGraphOutput(graph, output)) {
    skip = {reason, "'" + output + "' is a graph output"};
    return -1;
  }
  auto use = uses.find(output);
  auto reader = readers.find(output);
  if (use == uses.end() || use->second != 1 || reader == readers.end() ||
      reader->second.size() != 1) {
    const int count = use == uses.end() ? 0 : use->second;
    skip = {reason, "'" + output + "' is read " + std::to_string(count) + " times"};
    return -1;
  }
  const onnx::NodeProto& add = graph.node(reader->second[0]);
  if (!IsPlain(add, "Add") || add.input_size() != 2 || add.input(0) == add.input(1)) {
    skip = {reason, "'" + output + "' is read by " + add.op_type() + " '" + NodeLabel(add) + "'"};
    return -1;
  }
  return reader->second[0];
}

// The Add's other input when it is a bias Gemm can take for a [K, N] weight; "" with `skip` set
// otherwise.
std::string BiasInput(const onnx::GraphProto& graph, const onnx::NodeProto& add,
                      const std::string& matmul_output, const onnx::TensorProto& weight,
                      Skip& skip) {
  const std::string& other = add.input(0) == matmul_output ? add.input(1) : add.input(0);
  const ConstantLookup bias = LookUpConstant(graph, other);
  if (!bias) {
    skip = {"its Add's other input is not a constant", bias.why_not};
    return "";
  }
  const onnx::TensorProto& proto = *bias.proto();
  const int64_t n = weight.dims(1);
  const bool row = proto.dims_size() == 1 && proto.dims(0) == n;
  const bool matrix_row = proto.dims_size() == 2 && proto.dims(0) == 1 && proto.dims(1) == n;
  if (proto.data_type() != weight.data_type() || !(row || matrix_row)) {
    skip = {"its Add's bias is not [N] or [1, N] of the weight's dtype",
            "'" + other + "' is " + Describe(proto) + ", the weight " + Describe(weight)};
    return "";
  }
  return other;
}

// Why `matmul`'s operands do not fit Gemm; empty when they do (`weight` is then set).
Skip OperandSkip(const onnx::GraphProto& graph, const std::unordered_map<std::string, int>& ranks,
                 const onnx::NodeProto& matmul, ConstantLookup& weight) {
  weight = LookUpConstant(graph, matmul.input(1));
  if (!weight) return {"its weight is not a constant", weight.why_not};
  const onnx::TensorProto& proto = *weight.proto();
  if (!IsFloatElemType(proto.data_type()) || proto.dims_size() != 2) {
    return {"its weight is not a 2-D float matrix",
            "'" + matmul.input(1) + "' is " + Describe(proto)};
  }
  auto rank = ranks.find(matmul.input(0));
  if (rank == ranks.end()) {
    return {"its input is not known to be 2-D (Gemm takes only matrices)",
            "shape inference cannot tell the rank of '" + matmul.input(0) + "'"};
  }
  if (rank->second != 2) {
    return {"its input is not known to be 2-D (Gemm takes only matrices)",
            "'" + matmul.input(0) + "' has rank " + std::to_string(rank->second)};
  }
  return {};
}

class FuseMatMulAdd : public Pass {
 public:
  Status Apply(onnx::ModelProto& model, PassContext& context) override {
    const std::unordered_map<std::string, int> ranks = KnownRanks(model);
    onnx::GraphProto& graph = *model.mutable_graph();
    const std::unordered_map<std::string, int> uses = UseCounts(graph);
    const std::unordered_map<std::string, std::vector<int>> readers = Readers(graph);
    std::unordered_set<int> removed;
    context.Expect(kKind);
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      onnx::NodeProto& matmul = *graph.mutable_node(idx);
      if (!IsPlain(matmul, kKind) || matmul.input_size() != 2 || matmul.output_size() != 1) {
        continue;
      }
      context.Candidate(kKind);
      Skip skip;
      const int add = SoleAddReader(graph, matmul.output(0), uses, readers, skip);
      if (add >= 0) skip = Fuse(graph, ranks, matmul, graph.node(add), context);
      if (skip.reason.empty()) {
        removed.insert(add);
      } else {
        context.Skipped(kKind, matmul, skip.reason, skip.detail);
      }
    }
    EraseNodes(graph, removed);
    return Status::OK();
  }

 private:
  static Skip Fuse(const onnx::GraphProto& graph, const std::unordered_map<std::string, int>& ranks,
                   onnx::NodeProto& matmul, const onnx::NodeProto& add, PassContext& context) {
    ConstantLookup weight;
    Skip skip = OperandSkip(graph, ranks, matmul, weight);
    if (!skip.reason.empty()) return skip;
    const std::string bias = BiasInput(graph, add, matmul.output(0), *weight.proto(), skip);
    if (bias.empty()) return skip;
    const std::string old_output = matmul.output(0);
    NameIfUnnamed(matmul);
    matmul.set_op_type("Gemm");
    matmul.add_input(bias);
    matmul.set_output(0, add.output(0));
    context.Changed(matmul, "MatMul + Add '" + NodeLabel(add) + "' fused into Gemm with bias '" +
                                bias + "', output '" + add.output(0) + "' (was '" + old_output +
                                "')");
    context.Removed(add, "fused into Gemm '" + NodeLabel(matmul) + "'");
    return {};
  }
};

}  // namespace

Result<std::unique_ptr<Pass>> MakeFuseMatMulAdd(const Params&) {
  return std::unique_ptr<Pass>(new FuseMatMulAdd());
}

}  // namespace convgate::transform
