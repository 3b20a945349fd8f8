// fold_batchnorm: an inference BatchNormalization whose input comes only from a Conv with constant
// weights (constants.h: initializers, Constant nodes, Identity over either) is folded into it:
//   W' = W * scale / sqrt(var + eps)   (per output channel)
//   b' = (b - mean) * scale / sqrt(var + eps) + B
// computed in double and rounded once to the weights' dtype, written as new initializers; the
// Constant and Identity nodes the old weights came through are removed once nothing reads them.
// Numerically approximate: the folded Conv rounds differently from Conv followed by BatchNorm.
// Every BatchNormalization left alone is recorded with the reason.
//
// fold_batchnorm_wrong_for_tests drops eps: a deliberately wrong fold whose only purpose is to
// prove that `convgate transform --validate` catches a bad pass. It is hidden from --help.
#include <cmath>
#include <optional>
#include <unordered_set>

#include "transform/constants.h"
#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

constexpr char kKind[] = "BatchNormalization";

struct BatchNormConstants {
  Tensor scale, bias, mean, var;
  double epsilon = 1e-5;
};

// Why a candidate is left alone: `reason` is shared by every node skipped the same way, `detail`
// names what this one showed. An empty reason means the node was folded.
struct Skip {
  std::string reason;
  std::string detail;
};

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

// Why `bn` does not compute inference-mode normalization with per-channel statistics; empty when
// it does.
Skip ModeSkip(const onnx::NodeProto& bn) {
  if (bn.input_size() != 5) {
    return {"it does not have 5 inputs", std::to_string(bn.input_size()) + " inputs"};
  }
  for (int idx = 1; idx < bn.output_size(); ++idx) {
    if (!bn.output(idx).empty()) {
      return {"it is in training mode", "it outputs running statistics '" + bn.output(idx) + "'"};
    }
  }
  const onnx::AttributeProto* training = FindAttr(bn, "training_mode");
  if (training != nullptr && training->i() != 0) {
    return {"it is in training mode", "training_mode=1"};
  }
  const onnx::AttributeProto* is_test = FindAttr(bn, "is_test");  // opset < 7
  if (is_test != nullptr && is_test->i() == 0) return {"it is in training mode", "is_test=0"};
  const onnx::AttributeProto* spatial = FindAttr(bn, "spatial");  // opset < 9
  if (spatial != nullptr && spatial->i() == 0) {
    return {"it normalizes per element (spatial=0)", ""};
  }
  return {};
}

// A float constant as a Tensor, or nullopt with `skip` saying why it is not one (`what`: "Conv
// weight"). The type is checked before converting: a constant of a type convgate cannot hold is a
// skipped candidate, not an error.
Result<std::optional<Tensor>> FloatConstant(const onnx::GraphProto& graph, const std::string& name,
                                            const std::string& what, Skip& skip) {
  const ConstantLookup constant = LookUpConstant(graph, name);
  if (!constant) {
    skip = {"its " + what + " is not a constant", constant.why_not};
    return std::optional<Tensor>();
  }
  if (!IsFloatElemType(constant.proto()->data_type())) {
    skip = {"its " + what + " is not float",
            "'" + name + "' is " + onnx::TensorProto::DataType_Name(constant.proto()->data_type())};
    return std::optional<Tensor>();
  }
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, ToTensor(*constant.proto(), name));
  return std::optional<Tensor>(std::move(tensor));
}

// Skips `tensor` unless it is 1-D of `channels` elements.
bool HasChannels(const Tensor& tensor, const std::string& name, int64_t channels,
                 const std::string& what, Skip& skip) {
  if (tensor.shape().dims() == std::vector<int64_t>{channels}) return true;
  skip = {"its " + what + " is not [C] for the Conv's C output channels",
          "'" + name + "' has shape " + tensor.shape().ToString() + ", C is " +
              std::to_string(channels)};
  return false;
}

// The BatchNorm's four constants, each 1-D of `channels` elements; nullopt, with `skip` set, when
// any is not.
Result<std::optional<BatchNormConstants>> ReadBatchNorm(const onnx::GraphProto& graph,
                                                        const onnx::NodeProto& bn, int64_t channels,
                                                        Skip& skip) {
  static const char* const kWhat[4] = {"scale", "B", "mean", "var"};
  BatchNormConstants constants;
  Tensor* slots[4] = {&constants.scale, &constants.bias, &constants.mean, &constants.var};
  for (int idx = 0; idx < 4; ++idx) {
    const std::string& name = bn.input(idx + 1);
    CONVGATE_ASSIGN_OR_RETURN(std::optional<Tensor> tensor,
                              FloatConstant(graph, name, kWhat[idx], skip));
    if (!tensor || !HasChannels(*tensor, name, channels, kWhat[idx], skip)) {
      return std::optional<BatchNormConstants>();
    }
    *slots[idx] = std::move(*tensor);
  }
  if (const onnx::AttributeProto* eps = FindAttr(bn, "epsilon")) constants.epsilon = eps->f();
  return std::optional<BatchNormConstants>(std::move(constants));
}

// Why the BatchNorm's input is not a Conv output it alone reads; empty when it is.
Skip ProducerSkip(const onnx::GraphProto& graph, const onnx::NodeProto& bn,
                  const std::unordered_map<std::string, int>& producers,
                  const std::unordered_map<std::string, int>& uses) {
  const std::string& input = bn.input(0);
  auto producer = producers.find(input);
  if (producer == producers.end()) {
    return {"its input is not computed by a Conv", "'" + input + "' is not computed by a node"};
  }
  const onnx::NodeProto& conv = graph.node(producer->second);
  if (conv.op_type() != "Conv" || !conv.domain().empty()) {
    return {"its input is not computed by a Conv",
            "'" + input + "' is computed by " + conv.op_type() + " '" + NodeLabel(conv) + "'"};
  }
  if (IsGraphOutput(graph, input)) {
    return {"its Conv output has other readers", "'" + input + "' is a graph output"};
  }
  const int readers = uses.at(input);
  if (readers != 1) {
    return {"its Conv output has other readers",
            "'" + input + "' is read " + std::to_string(readers) + " times"};
  }
  return {};
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
    context.Expect(kKind);
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      const onnx::NodeProto& bn = graph.node(idx);
      if (bn.op_type() != kKind || !bn.domain().empty()) continue;
      context.Candidate(kKind);
      Skip skip = ModeSkip(bn);
      if (skip.reason.empty()) skip = ProducerSkip(graph, bn, producers, uses);
      if (skip.reason.empty()) {
        onnx::NodeProto& conv = *graph.mutable_node(producers.at(bn.input(0)));
        CONVGATE_ASSIGN_OR_RETURN(skip, Fold(graph, conv, bn, names, context));
      }
      if (skip.reason.empty()) {
        removed.insert(idx);
      } else {
        context.Skipped(kKind, bn, skip.reason, skip.detail);
      }
    }
    EraseNodes(graph, removed);
    // Weights read through Constant or Identity nodes leave those nodes unread once folded.
    for (const onnx::NodeProto& node : EraseUnreadConstants(graph)) {
      context.Removed(node, "no longer read after folding");
    }
    RemoveUnusedInitializers(graph);
    return Status::OK();
  }

 private:
  // Folds `bn` into `conv` when the weights and statistics are constants of matching shapes;
  // otherwise says why not.
  Result<Skip> Fold(onnx::GraphProto& graph, onnx::NodeProto& conv, const onnx::NodeProto& bn,
                    UniqueNames& names, PassContext& context) const {
    Skip skip;
    if (conv.input_size() < 2) return Skip{"its Conv has no weight input", ""};
    CONVGATE_ASSIGN_OR_RETURN(std::optional<Tensor> weight,
                              FloatConstant(graph, conv.input(1), "Conv weight", skip));
    if (!weight) return skip;
    if (weight->shape().dims().size() < 3) {
      return Skip{"its Conv weight has fewer than 3 dims",
                  "'" + conv.input(1) + "' has shape " + weight->shape().ToString()};
    }
    const int64_t channels = weight->shape().dims()[0];
    std::optional<Tensor> bias;
    if (conv.input_size() > 2 && !conv.input(2).empty()) {
      CONVGATE_ASSIGN_OR_RETURN(bias, FloatConstant(graph, conv.input(2), "Conv bias", skip));
      if (!bias || !HasChannels(*bias, conv.input(2), channels, "Conv bias", skip)) return skip;
    }
    CONVGATE_ASSIGN_OR_RETURN(std::optional<BatchNormConstants> bn_constants,
                              ReadBatchNorm(graph, bn, channels, skip));
    if (!bn_constants) return skip;
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
    return Skip{};
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
