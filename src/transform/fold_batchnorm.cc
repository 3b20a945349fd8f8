// fold_batchnorm: an inference BatchNormalization whose input comes only from a Conv with constant
// weights is folded into that Conv:
//   W' = W * scale / sqrt(var + eps)   (per output channel)
//   b' = (b - mean) * scale / sqrt(var + eps) + B
// computed in double and rounded once to the weights' dtype. Numerically approximate: the folded
// Conv rounds differently from Conv followed by BatchNorm.
//
// fold_batchnorm_wrong_for_tests drops eps: a deliberately wrong fold whose only purpose is to
// prove that `convgate transform --validate` catches a bad pass. It is hidden from --help.
#include <cmath>
#include <optional>
#include <unordered_set>

#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

struct BatchNormConstants {
  Tensor scale, bias, mean, var;
  double epsilon = 1e-5;
};

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

bool IsInferenceBatchNorm(const onnx::NodeProto& node) {
  if (node.op_type() != "BatchNormalization" || !node.domain().empty()) return false;
  if (node.input_size() != 5) return false;
  for (int idx = 1; idx < node.output_size(); ++idx) {
    if (!node.output(idx).empty()) return false;  // running mean/var outputs: training mode
  }
  const onnx::AttributeProto* training = FindAttr(node, "training_mode");
  const onnx::AttributeProto* spatial = FindAttr(node, "spatial");  // opset < 9
  return (training == nullptr || training->i() == 0) && (spatial == nullptr || spatial->i() == 1);
}

// A float initializer converted to a Tensor; nullopt-like empty Result when it is not one.
Result<std::optional<Tensor>> FloatInitializer(const onnx::GraphProto& graph,
                                               const std::string& name) {
  const onnx::TensorProto* proto = FindInitializer(graph, name);
  if (proto == nullptr || !IsFloatElemType(proto->data_type())) return std::optional<Tensor>();
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, ToTensor(*proto));
  return std::optional<Tensor>(std::move(tensor));
}

// The BatchNorm's four constants, each 1-D of `channels` elements; nullopt when any is not.
Result<std::optional<BatchNormConstants>> ReadBatchNorm(const onnx::GraphProto& graph,
                                                        const onnx::NodeProto& bn,
                                                        int64_t channels) {
  Tensor* slots[4];
  BatchNormConstants constants;
  slots[0] = &constants.scale;
  slots[1] = &constants.bias;
  slots[2] = &constants.mean;
  slots[3] = &constants.var;
  for (int idx = 0; idx < 4; ++idx) {
    CONVGATE_ASSIGN_OR_RETURN(std::optional<Tensor> tensor,
                              FloatInitializer(graph, bn.input(idx + 1)));
    if (!tensor || tensor->shape().dims() != std::vector<int64_t>{channels}) {
      return std::optional<BatchNormConstants>();
    }
    *slots[idx] = std::move(*tensor);
  }
  if (const onnx::AttributeProto* eps = FindAttr(bn, "epsilon")) constants.epsilon = eps->f();
  return std::optional<BatchNormConstants>(std::move(constants));
}

class FoldBatchNorm : public Pass {
 public:
  explicit FoldBatchNorm(bool keep_epsilon) : keep_epsilon_(keep_epsilon) {}

  Status Apply(onnx::ModelProto& model, PassContext& context) override {
    onnx::GraphProto& graph = *model.mutable_graph();
    const std::unordered_map<std::string, int> uses = UseCounts(graph);
    const std::unordered_map<std::string, int> producers = Producers(graph);
    UniqueNames names(graph);
    std::unordered_set<int> removed;
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      const onnx::NodeProto& bn = graph.node(idx);
      if (!IsInferenceBatchNorm(bn)) continue;
      auto producer = producers.find(bn.input(0));
      if (producer == producers.end()) continue;
      onnx::NodeProto& conv = *graph.mutable_node(producer->second);
      if (conv.op_type() != "Conv" || !conv.domain().empty() || conv.output_size() != 1 ||
          uses.at(bn.input(0)) != 1) {
        continue;
      }
      CONVGATE_ASSIGN_OR_RETURN(bool folded, Fold(graph, conv, bn, names, context));
      if (folded) removed.insert(idx);
    }
    EraseNodes(graph, removed);
    RemoveUnusedInitializers(graph);
    return Status::OK();
  }

 private:
  // Folds `bn` into `conv` when the weights and statistics are constants of matching shapes.
  Result<bool> Fold(onnx::GraphProto& graph, onnx::NodeProto& conv, const onnx::NodeProto& bn,
                    UniqueNames& names, PassContext& context) const {
    if (conv.input_size() < 2) return false;
    CONVGATE_ASSIGN_OR_RETURN(std::optional<Tensor> weight, FloatInitializer(graph, conv.input(1)));
    if (!weight || weight->shape().dims().size() < 3) return false;
    const int64_t channels = weight->shape().dims()[0];
    std::optional<Tensor> bias;
    if (conv.input_size() > 2 && !conv.input(2).empty()) {
      CONVGATE_ASSIGN_OR_RETURN(bias, FloatInitializer(graph, conv.input(2)));
      if (!bias || bias->shape().dims() != std::vector<int64_t>{channels}) return false;
    }
    CONVGATE_ASSIGN_OR_RETURN(std::optional<BatchNormConstants> bn_constants,
                              ReadBatchNorm(graph, bn, channels));
    if (!bn_constants) return false;
    const std::vector<double> factor = Factors(*bn_constants);
    CONVGATE_ASSIGN_OR_RETURN(Tensor new_bias, FoldedBias(*weight, bias, *bn_constants, factor));
    ScaleWeight(*weight, factor);
    const std::string weight_name = names.Make(conv.input(1) + "_bn_folded");
    const std::string bias_name = names.Make(bn.output(0) + "_bias_bn_folded");
    CONVGATE_ASSIGN_OR_RETURN(*graph.add_initializer(), ToProto(*weight, weight_name));
    CONVGATE_ASSIGN_OR_RETURN(*graph.add_initializer(), ToProto(new_bias, bias_name));
    const std::string old_weight = conv.input(1);
    NameIfUnnamed(conv);
    conv.set_input(1, weight_name);
    if (conv.input_size() > 2) {
      conv.set_input(2, bias_name);
    } else {
      conv.add_input(bias_name);
    }
    conv.set_output(0, bn.output(0));
    context.Changed(conv, "folded BatchNormalization '" + NodeLabel(bn) + "': weight '" +
                              old_weight + "' -> '" + weight_name + "', bias '" + bias_name +
                              "', output '" + bn.output(0) + "'");
    context.Removed(bn, "folded into Conv '" + NodeLabel(conv) + "'");
    return true;
  }

  // scale / sqrt(var + eps) per channel (eps dropped by the wrong test variant).
  std::vector<double> Factors(const BatchNormConstants& bn) const {
    const double eps = keep_epsilon_ ? bn.epsilon : 0.0;
    std::vector<double> factor(static_cast<size_t>(bn.scale.num_elements()));
    for (size_t c = 0; c < factor.size(); ++c) {
      const auto flat = static_cast<int64_t>(c);
      factor[c] = bn.scale.GetDouble(flat) / std::sqrt(bn.var.GetDouble(flat) + eps);
    }
    return factor;
  }

  static void ScaleWeight(Tensor& weight, const std::vector<double>& factor) {
    const int64_t per_channel = weight.num_elements() / static_cast<int64_t>(factor.size());
    for (int64_t flat = 0; flat < weight.num_elements(); ++flat) {
      weight.SetDouble(flat, weight.GetDouble(flat) * factor[flat / per_channel]);
    }
  }

  static Result<Tensor> FoldedBias(const Tensor& weight, const std::optional<Tensor>& bias,
                                   const BatchNormConstants& bn,
                                   const std::vector<double>& factor) {
    const auto channels = static_cast<int64_t>(factor.size());
    CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make({channels}));
    CONVGATE_ASSIGN_OR_RETURN(Tensor folded, Tensor::Allocate(weight.dtype(), std::move(shape)));
    for (int64_t c = 0; c < channels; ++c) {
      const double b = bias ? bias->GetDouble(c) : 0.0;
      folded.SetDouble(c, (b - bn.mean.GetDouble(c)) * factor[c] + bn.bias.GetDouble(c));
    }
    return folded;
  }

  bool keep_epsilon_;
};

}  // namespace

Result<std::unique_ptr<Pass>> MakeFoldBatchNorm(const Params&) {
  return std::unique_ptr<Pass>(new FoldBatchNorm(/*keep_epsilon=*/true));
}

Result<std::unique_ptr<Pass>> MakeFoldBatchNormWrongForTests(const Params&) {
  return std::unique_ptr<Pass>(new FoldBatchNorm(/*keep_epsilon=*/false));
}

}  // namespace convgate::transform
