// Breaks an ONNX model on purpose, the way a faulty converter would, so tests can prove that the
// gate catches each kind of silent conversion bug and names the output it corrupts.
//
//   convgate-inject-fault IN.onnx OUT.onnx --fault KIND [--node NAME] [--factor F]
//
// KIND:
//   perturb-conv      scale one Conv's weight by F (default 1.01)
//   swap-channels     swap output channels 0 and 1 of one Conv (weight rows and bias)
//   drop-bias         remove one Conv's (or Gemm's) bias input
//   norm-epsilon      set one BatchNormalization / InstanceNormalization / LayerNormalization's
//                     epsilon to F (default 0.1)
//   fp16-overflow     an fp32-exact rescaling: one Conv's weight and bias times F (default 1e5) and
//                     the next Conv's weight divided by F (ReLU between them is positively
//                     homogeneous, so fp32 computes the same function) - which overflows float16
//                     once the model is converted
//   nan-node          insert Log after one Conv: negative activations become NaN
//   quant-scale       scale one DequantizeLinear's float scale by F (default 4): the corrupted
//                     scale of an int8 model (a QDQ model, as --to int8-static writes)
// --node picks the node by name (default: the first node the fault applies to; for fp16-overflow,
// the first Conv followed by Relu and another Conv). perturb-conv, swap-channels, drop-bias and
// norm-epsilon also find nodes inside If/Loop/Scan bodies whose weights are main-graph
// initializers. Prints one JSON line saying what changed.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnx_builder.h"

namespace {

struct Options {
  std::string in, out, fault, node;
  double factor = std::nan("");
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "convgate-inject-fault: %s\n", message.c_str());
  return 1;
}

onnx::TensorProto* FindInitializer(onnx::GraphProto& graph, const std::string& name) {
  for (auto& tensor : *graph.mutable_initializer()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

// Float view of an initializer (raw_data or float_data), written back by StoreFloats.
std::vector<float> LoadFloats(const onnx::TensorProto& tensor) {
  if (tensor.has_raw_data()) {
    std::vector<float> values(tensor.raw_data().size() / sizeof(float));
    std::memcpy(values.data(), tensor.raw_data().data(), values.size() * sizeof(float));
    return values;
  }
  return {tensor.float_data().begin(), tensor.float_data().end()};
}

void StoreFloats(onnx::TensorProto& tensor, const std::vector<float>& values) {
  tensor.clear_float_data();
  tensor.set_raw_data(values.data(), values.size() * sizeof(float));
}

// The first node of `ops` (or the one named `name`) for which `accept` holds, in file order; the
// nodes of If/Loop/Scan bodies count too, each body after its node, so a fault can be put inside a
// branch (its weights may live in the main graph: bodies read outer values by name).
onnx::NodeProto* PickNode(onnx::GraphProto& graph, const std::vector<std::string>& ops,
                          const std::string& name,
                          const std::function<bool(const onnx::NodeProto&)>& accept,
                          bool into_bodies = true) {
  for (auto& node : *graph.mutable_node()) {
    bool op_ok = false;
    for (const auto& op : ops) op_ok |= node.op_type() == op;
    if (op_ok && (name.empty() || node.name() == name) && accept(node)) return &node;
    for (auto& attribute : *node.mutable_attribute()) {
      if (!attribute.has_g() || !into_bodies) continue;
      if (onnx::NodeProto* inner = PickNode(*attribute.mutable_g(), ops, name, accept)) {
        return inner;
      }
    }
  }
  return nullptr;
}

bool HasFloatWeight(onnx::GraphProto& graph, const onnx::NodeProto& node) {
  if (node.input_size() < 2) return false;
  const onnx::TensorProto* weight = FindInitializer(graph, node.input(1));
  return weight != nullptr && weight->data_type() == onnx::TensorProto::FLOAT;
}

void Scale(onnx::GraphProto& graph, const std::string& initializer, double factor) {
  onnx::TensorProto* tensor = FindInitializer(graph, initializer);
  std::vector<float> values = LoadFloats(*tensor);
  for (float& v : values) v = static_cast<float>(v * factor);
  StoreFloats(*tensor, values);
}

std::string QuantScale(onnx::GraphProto& graph, const Options& options) {
  onnx::NodeProto* dequantize =
      PickNode(graph, {"DequantizeLinear"}, options.node, [&](const auto& n) {
        const onnx::TensorProto* scale =
            n.input_size() > 1 ? FindInitializer(graph, n.input(1)) : nullptr;
        return scale != nullptr && scale->data_type() == onnx::TensorProto::FLOAT;
      });
  if (dequantize == nullptr) return "";
  const double factor = std::isnan(options.factor) ? 4.0 : options.factor;
  Scale(graph, dequantize->input(1), factor);
  return dequantize->name() + ": scale '" + dequantize->input(1) + "' times " +
         std::to_string(factor);
}

std::string PerturbConv(onnx::GraphProto& graph, const Options& options) {
  onnx::NodeProto* conv = PickNode(graph, {"Conv"}, options.node,
                                   [&](const auto& n) { return HasFloatWeight(graph, n); });
  if (conv == nullptr) return "";
  const double factor = std::isnan(options.factor) ? 1.01 : options.factor;
  Scale(graph, conv->input(1), factor);
  return conv->name() + ": weight '" + conv->input(1) + "' scaled by " + std::to_string(factor);
}

// Swaps slices 0 and 1 along axis 0 of an initializer holding `slices` equal slices.
void SwapFirstSlices(onnx::TensorProto& tensor) {
  std::vector<float> values = LoadFloats(tensor);
  const size_t slice = values.size() / static_cast<size_t>(tensor.dims(0));
  for (size_t idx = 0; idx < slice; ++idx) std::swap(values[idx], values[slice + idx]);
  StoreFloats(tensor, values);
}

std::string SwapChannels(onnx::GraphProto& graph, const Options& options) {
  onnx::NodeProto* conv = PickNode(graph, {"Conv"}, options.node, [&](const auto& n) {
    return HasFloatWeight(graph, n) && FindInitializer(graph, n.input(1))->dims(0) >= 2;
  });
  if (conv == nullptr) return "";
  SwapFirstSlices(*FindInitializer(graph, conv->input(1)));
  if (conv->input_size() > 2 && FindInitializer(graph, conv->input(2)) != nullptr) {
    SwapFirstSlices(*FindInitializer(graph, conv->input(2)));
  }
  return conv->name() + ": output channels 0 and 1 swapped";
}

std::string DropBias(onnx::GraphProto& graph, const Options& options) {
  onnx::NodeProto* node = PickNode(graph, {"Conv", "Gemm"}, options.node, [&](const auto& n) {
    return n.input_size() > 2 && FindInitializer(graph, n.input(2)) != nullptr;
  });
  if (node == nullptr) return "";
  const std::string bias = node->input(2);
  node->mutable_input()->RemoveLast();
  return node->name() + ": bias '" + bias + "' dropped";
}

std::string NormEpsilon(onnx::GraphProto& graph, const Options& options) {
  onnx::NodeProto* node =
      PickNode(graph, {"BatchNormalization", "InstanceNormalization", "LayerNormalization"},
               options.node, [](const auto&) { return true; });
  if (node == nullptr) return "";
  const float epsilon = static_cast<float>(std::isnan(options.factor) ? 0.1 : options.factor);
  for (auto& attr : *node->mutable_attribute()) {
    if (attr.name() == "epsilon") {
      attr.set_f(epsilon);
      return node->name() + ": epsilon set to " + std::to_string(epsilon);
    }
  }
  convgate::tools::SetFloat(node, "epsilon", epsilon);
  return node->name() + ": epsilon set to " + std::to_string(epsilon);
}

// The node consuming `value`, or null.
onnx::NodeProto* ConsumerOf(onnx::GraphProto& graph, const std::string& value) {
  for (auto& node : *graph.mutable_node()) {
    for (const auto& input : node.input()) {
      if (input == value) return &node;
    }
  }
  return nullptr;
}

std::string Fp16Overflow(onnx::GraphProto& graph, const Options& options) {
  onnx::NodeProto* second = nullptr;
  onnx::NodeProto* first = PickNode(graph, {"Conv"}, options.node, [&](const auto& n) {
    if (!HasFloatWeight(graph, n)) return false;
    onnx::NodeProto* relu = ConsumerOf(graph, n.output(0));
    if (relu == nullptr || relu->op_type() != "Relu") return false;
    second = ConsumerOf(graph, relu->output(0));
    return second != nullptr && second->op_type() == "Conv" && HasFloatWeight(graph, *second);
  });
  if (first == nullptr) return "";
  const double factor = std::isnan(options.factor) ? 1e5 : options.factor;
  Scale(graph, first->input(1), factor);
  if (first->input_size() > 2) Scale(graph, first->input(2), factor);
  Scale(graph, second->input(1), 1.0 / factor);
  return first->name() + " scaled by " + std::to_string(factor) + ", " + second->name() +
         " by its inverse (fp32-equivalent; overflows float16)";
}

std::string NanNode(onnx::GraphProto& graph, const Options& options) {
  // Main graph only: the Log goes into the Conv's graph, found by position below.
  onnx::NodeProto* conv = PickNode(
      graph, {"Conv"}, options.node, [](const auto&) { return true; }, /*into_bodies=*/false);
  if (conv == nullptr) return "";
  const std::string original = conv->output(0);
  const std::string renamed = original + "_before_log";
  conv->set_output(0, renamed);
  onnx::NodeProto* log = graph.add_node();
  log->set_op_type("Log");
  log->set_name("injected_log_" + conv->name());
  log->add_input(renamed);
  log->add_output(original);
  // Keep the graph topologically sorted: move the new node right after the Conv.
  auto* nodes = graph.mutable_node();
  int conv_idx = 0;
  while (&nodes->at(conv_idx) != conv) ++conv_idx;
  for (int idx = nodes->size() - 1; idx > conv_idx + 1; --idx) nodes->SwapElements(idx, idx - 1);
  return "Log inserted after " + conv->name();
}

bool ParseOptions(int argc, char** argv, Options& options) {
  if (argc < 5) return false;
  options.in = argv[1];
  options.out = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--fault") {
      options.fault = argv[i + 1];
    } else if (flag == "--node") {
      options.node = argv[i + 1];
    } else if (flag == "--factor") {
      options.factor = std::atof(argv[i + 1]);
    } else {
      return false;
    }
  }
  return !options.fault.empty() && argc % 2 == 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: convgate-inject-fault IN.onnx OUT.onnx --fault KIND [--node NAME] "
                 "[--factor F]\n");
    return 2;
  }
  onnx::ModelProto model;
  std::ifstream in(options.in, std::ios::binary);
  if (!in || !model.ParseFromIstream(&in))
    return Fail("cannot read an ONNX model from " + options.in);
  const std::map<std::string, std::function<std::string(onnx::GraphProto&, const Options&)>>
      faults = {{"perturb-conv", PerturbConv},   {"swap-channels", SwapChannels},
                {"drop-bias", DropBias},         {"norm-epsilon", NormEpsilon},
                {"fp16-overflow", Fp16Overflow}, {"nan-node", NanNode},
                {"quant-scale", QuantScale}};
  auto fault = faults.find(options.fault);
  if (fault == faults.end()) return Fail("unknown fault '" + options.fault + "'");
  const std::string change = fault->second(*model.mutable_graph(), options);
  if (change.empty()) {
    return Fail(options.in + " has no node the fault '" + options.fault + "' applies to" +
                (options.node.empty() ? "" : " named '" + options.node + "'"));
  }
  if (!convgate::tools::WriteModel(options.out, model)) return Fail("cannot write " + options.out);
  std::printf("{\"fault\": \"%s\", \"change\": \"%s\"}\n", options.fault.c_str(), change.c_str());
  return 0;
}
