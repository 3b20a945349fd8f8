// merge_parallel_matmuls: MatMuls reading the same input A with constant 2-D weights W_i [K, N_i]
// (constants.h: initializers, Constant nodes, Identity over either) of one dtype become one MatMul
// over the weights concatenated along N, followed by a Split along the last axis into the original
// outputs (after Optimum's MergeLinears); Constant and Identity nodes left unread are removed and
// every MatMul left alone is recorded with the reason. Numerically approximate: each output element
// is the same dot product, but the wider MatMul may block and accumulate it differently.
#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>

#include "transform/constants.h"
#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

constexpr char kKind[] = "MatMul";

struct Group {
  std::vector<int> nodes;  // main-graph indices, in graph order
};

using MergeKey = std::tuple<std::string, int64_t, int32_t>;  // input A, K, weight dtype

bool IsCandidate(const onnx::NodeProto& node) {
  return node.op_type() == kKind && node.domain().empty() && node.input_size() == 2 &&
         node.output_size() == 1;
}

// The key of a MatMul with a constant 2-D float weight; nullopt, with the skip recorded, otherwise.
std::optional<MergeKey> KeyOf(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                              PassContext& context) {
  const ConstantLookup weight = LookUpConstant(graph, node.input(1));
  if (!weight) {
    context.Skipped(kKind, node, "its weight is not a constant", weight.why_not);
    return std::nullopt;
  }
  const onnx::TensorProto& proto = *weight.proto();
  if (proto.dims_size() != 2 || !IsFloatElemType(proto.data_type())) {
    context.Skipped(kKind, node, "its weight is not a 2-D float matrix",
                    "'" + node.input(1) + "' is " +
                        onnx::TensorProto::DataType_Name(proto.data_type()) + " of rank " +
                        std::to_string(proto.dims_size()));
    return std::nullopt;
  }
  return std::make_tuple(node.input(0), proto.dims(0), proto.data_type());
}

std::vector<Group> FindGroups(const onnx::GraphProto& graph, PassContext& context) {
  std::map<MergeKey, Group> by_key;
  context.Expect(kKind);
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    if (!IsCandidate(graph.node(idx))) continue;
    context.Candidate(kKind);
    std::optional<MergeKey> key = KeyOf(graph, graph.node(idx), context);
    if (key) by_key[*key].nodes.push_back(idx);
  }
  std::vector<Group> groups;
  for (auto& [key, group] : by_key) {
    if (group.nodes.size() >= 2) {
      groups.push_back(std::move(group));
      continue;
    }
    const auto& [input, k, dtype] = key;
    context.Skipped(kKind, graph.node(group.nodes[0]),
                    "no other MatMul reads its input with a constant weight of the same K and "
                    "dtype",
                    "input '" + input + "', K " + std::to_string(k) + ", " +
                        onnx::TensorProto::DataType_Name(dtype));
  }
  return groups;
}

// [K, N_1 + N_2 + ...] from the weights' rows side by side.
Result<Tensor> ConcatColumns(const std::vector<Tensor>& weights) {
  const int64_t rows = weights[0].shape().dims()[0];
  int64_t columns = 0;
  for (const Tensor& weight : weights) columns += weight.shape().dims()[1];
  CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make({rows, columns}));
  CONVGATE_ASSIGN_OR_RETURN(Tensor merged, Tensor::Allocate(weights[0].dtype(), std::move(shape)));
  const size_t element = DTypeSize(merged.dtype());
  std::byte* out = merged.bytes().data();
  for (int64_t row = 0; row < rows; ++row) {
    for (const Tensor& weight : weights) {
      const size_t row_bytes = static_cast<size_t>(weight.shape().dims()[1]) * element;
      std::memcpy(out, weight.bytes().data() + static_cast<size_t>(row) * row_bytes, row_bytes);
      out += row_bytes;
    }
  }
  return merged;
}

class MergeParallelMatMuls : public Pass {
 public:
  Status Apply(onnx::ModelProto& model, PassContext& context) override {
    const bool split_as_input = DefaultOpset(model) >= 13;
    onnx::GraphProto& graph = *model.mutable_graph();
    UniqueNames names(graph);
    // first node index of a group -> the MatMul and Split replacing the group there
    std::map<int, std::vector<onnx::NodeProto>> replacements;
    std::unordered_set<int> removed;
    for (const Group& group : FindGroups(graph, context)) {
      CONVGATE_ASSIGN_OR_RETURN(std::vector<onnx::NodeProto> nodes,
                                Merge(graph, group, split_as_input, names, context));
      replacements[group.nodes[0]] = std::move(nodes);
      removed.insert(group.nodes.begin(), group.nodes.end());
    }
    Rebuild(graph, replacements, removed);
    // Weights read through Constant or Identity nodes leave those nodes unread once merged.
    for (const onnx::NodeProto& node : EraseUnreadConstants(graph)) {
      context.Removed(node, "no longer read after merging");
    }
    RemoveUnusedInitializers(graph);
    return Status::OK();
  }

 private:
  static Result<std::vector<onnx::NodeProto>> Merge(onnx::GraphProto& graph, const Group& group,
                                                    bool split_as_input, UniqueNames& names,
                                                    PassContext& context) {
    std::vector<Tensor> weights;
    std::vector<int64_t> sizes;
    for (int idx : group.nodes) {
      const std::string& name = graph.node(idx).input(1);
      CONVGATE_ASSIGN_OR_RETURN(Tensor weight,
                                ToTensor(*LookUpConstant(graph, name).proto(), name));
      sizes.push_back(weight.shape().dims()[1]);
      weights.push_back(std::move(weight));
    }
    CONVGATE_ASSIGN_OR_RETURN(Tensor merged, ConcatColumns(weights));
    const onnx::NodeProto& first = graph.node(group.nodes[0]);
    const std::string weight_name = names.Make(first.input(0) + "_merged_weight");
    const std::string merged_output = names.Make(first.input(0) + "_merged_matmul");
    CONVGATE_ASSIGN_OR_RETURN(*graph.add_initializer(), ToProto(merged, weight_name));

    std::vector<onnx::NodeProto> nodes(2);
    onnx::NodeProto& matmul = nodes[0];
    matmul.set_name(names.Make(first.input(0) + "_merged_matmul_node"));
    matmul.set_op_type("MatMul");
    matmul.add_input(first.input(0));
    matmul.add_input(weight_name);
    matmul.add_output(merged_output);
    onnx::NodeProto& split = nodes[1];
    split.set_name(names.Make(first.input(0) + "_merged_split"));
    split.set_op_type("Split");
    split.add_input(merged_output);
    onnx::AttributeProto* axis = split.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(-1);
    if (split_as_input) {
      const std::string sizes_name = names.Make(first.input(0) + "_merged_split_sizes");
      CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make({static_cast<int64_t>(sizes.size())}));
      const Tensor split_sizes = Tensor::FromVector(DType::kInt64, std::move(shape), sizes);
      CONVGATE_ASSIGN_OR_RETURN(*graph.add_initializer(), ToProto(split_sizes, sizes_name));
      split.add_input(sizes_name);
    } else {
      onnx::AttributeProto* attr = split.add_attribute();
      attr->set_name("split");
      attr->set_type(onnx::AttributeProto::INTS);
      for (int64_t size : sizes) attr->add_ints(size);
    }
    std::string merged_names;
    for (int idx : group.nodes) {
      const onnx::NodeProto& node = graph.node(idx);
      split.add_output(node.output(0));
      merged_names += (merged_names.empty() ? "'" : ", '") + NodeLabel(node) + "'";
      context.Removed(node, "merged into MatMul '" + matmul.name() + "'");
    }
    context.Created(matmul, "merges MatMuls " + merged_names + " over weight '" + weight_name +
                                "' [" + std::to_string(merged.shape().dims()[0]) + ", " +
                                std::to_string(merged.shape().dims()[1]) + "]");
    context.Created(split, "splits the merged MatMul back into the outputs of " + merged_names);
    return nodes;
  }

  static void Rebuild(onnx::GraphProto& graph, std::map<int, std::vector<onnx::NodeProto>>& add,
                      const std::unordered_set<int>& removed) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> rebuilt;
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      auto replacement = add.find(idx);
      if (replacement != add.end()) {
        for (onnx::NodeProto& node : replacement->second) *rebuilt.Add() = std::move(node);
      }
      if (removed.count(idx) == 0) *rebuilt.Add() = std::move(*graph.mutable_node(idx));
    }
    graph.mutable_node()->Swap(&rebuilt);
  }
};

}  // namespace

Result<std::unique_ptr<Pass>> MakeMergeParallelMatMuls(const Params&) {
  return std::unique_ptr<Pass>(new MergeParallelMatMuls());
}

}  // namespace convgate::transform
