// Writes the models behind the noise-floor tests and bench/noise_floor.sh, from code (fixed-seed
// weights), so no model file is ever committed.
//
//   convgate-make-noise-models OUT_DIR
//
// deepcnn.onnx            six Conv -> BatchNormalization -> Relu blocks (16 channels, 32x32) and a
//                         GlobalAveragePool -> Gemm head: "features" [batch, 16, 32, 32] and
//                         "logits" [batch, 10]. Fed [0, 255] (--val-range 0,255), its activations
//                         reach the thousands, where ONNX Runtime's Conv+BatchNorm fusion differs
//                         from the unfused graph by far more than float32's default atol 1e-5.
// deepcnn_folded.onnx     a faithful conversion: every BatchNorm folded into its Conv in double
//                         (what OpenVINO and optimizers do); differs only by rounding.
// deepcnn_fault_*.onnx    conversions with one injected fault each: weight (one Conv weight scaled
//                         by 1.01), bias (block 3's Conv bias dropped), channels (two input
//                         channels of block 2 swapped), epsilon (block 4's BatchNorm epsilon 1e-1
//                         instead of 1e-5).
// zeromap.onnx            a detector head that is ~0 on noise: "map" = Conv with weights of
//                         ~1.5e-8, below float16's smallest subnormal (6e-8), so a float16
//                         conversion computes exactly 0 where the source has ~2e-7; and
//                         "gate" = Relu(Conv - 100), 0 on every element for inputs in [0, 1).
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "lcg.h"
#include "onnx_builder.h"

namespace {

using convgate::tools::AddFloatInitializer;
using convgate::tools::AddNode;
using convgate::tools::Lcg;
using convgate::tools::SetFloat;
using convgate::tools::SetInt;
using convgate::tools::SetInts;
using convgate::tools::SetType;

constexpr int kBlocks = 6;
constexpr int kWidth = 16;  // channels of every block
constexpr int kSide = 32;
constexpr int kClasses = 10;

struct Block {
  int in = 0;
  std::vector<float> conv_w, conv_b;                      // [16, in, 3, 3], [16]
  std::vector<float> bn_scale, bn_bias, bn_mean, bn_var;  // [16] each
  float epsilon = 1e-5f;
};

struct DeepCnn {
  std::vector<Block> blocks;
  std::vector<float> fc_w, fc_b;  // Gemm B [10, 16] (transB=1), [10]
};

DeepCnn MakeDeepCnn() {
  Lcg rng(20261128);
  DeepCnn net;
  for (int b = 0; b < kBlocks; ++b) {
    Block block;
    block.in = b == 0 ? 3 : kWidth;
    // He-like scale keeps the activations' magnitude roughly level from block to block.
    const float scale = std::sqrt(6.0f / static_cast<float>(block.in * 9));
    block.conv_w = rng.Vector(kWidth * block.in * 9, scale);
    block.conv_b = rng.Vector(kWidth, 0.5f);
    // Non-trivial statistics: a neutral BatchNorm would fold to nothing and hide the rounding.
    block.bn_scale = rng.Vector(kWidth, 0.3f, 1.0f);
    block.bn_bias = rng.Vector(kWidth, 0.2f);
    block.bn_mean = rng.Vector(kWidth, 0.3f);
    block.bn_var = rng.Vector(kWidth, 0.4f, 0.8f);
    net.blocks.push_back(std::move(block));
  }
  net.fc_w = rng.Vector(kClasses * kWidth, 0.2f);
  net.fc_b = rng.Vector(kClasses, 0.1f);
  return net;
}

void AddConv(onnx::GraphProto* graph, const std::string& prefix, const std::string& input, int in,
             const std::vector<float>& weight, const std::vector<float>& bias,
             const std::string& output) {
  AddFloatInitializer(graph, prefix + ".weight", {kWidth, in, 3, 3}, weight);
  AddFloatInitializer(graph, prefix + ".bias", {kWidth}, bias);
  auto* conv = AddNode(graph, "Conv", {input, prefix + ".weight", prefix + ".bias"}, {output});
  conv->set_name(prefix);
  SetInts(conv, "kernel_shape", {3, 3});
  SetInts(conv, "pads", {1, 1, 1, 1});
}

// Block b with BatchNorm as its own node, or (folded) merged into the Conv in double.
std::string AddBlock(onnx::GraphProto* graph, int b, const Block& block, const std::string& input,
                     bool folded) {
  const std::string prefix = "block" + std::to_string(b);
  const std::string output = prefix + ".relu";
  if (folded) {
    std::vector<float> weight(block.conv_w.size()), bias(kWidth);
    const size_t per_channel = block.conv_w.size() / kWidth;
    for (int c = 0; c < kWidth; ++c) {
      const double factor = block.bn_scale[c] / std::sqrt(double{block.bn_var[c]} + block.epsilon);
      for (size_t k = 0; k < per_channel; ++k) {
        weight[c * per_channel + k] =
            static_cast<float>(block.conv_w[c * per_channel + k] * factor);
      }
      bias[c] =
          static_cast<float>((block.conv_b[c] - block.bn_mean[c]) * factor + block.bn_bias[c]);
    }
    AddConv(graph, prefix + ".conv", input, block.in, weight, bias, prefix + ".conv");
    AddNode(graph, "Relu", {prefix + ".conv"}, {output})->set_name(prefix + ".relu");
    return output;
  }
  AddConv(graph, prefix + ".conv", input, block.in, block.conv_w, block.conv_b, prefix + ".conv");
  for (const auto& [name, values] :
       {std::pair<const char*, const std::vector<float>*>{"scale", &block.bn_scale},
        {"bias", &block.bn_bias},
        {"mean", &block.bn_mean},
        {"var", &block.bn_var}}) {
    AddFloatInitializer(graph, prefix + ".bn." + name, {kWidth}, *values);
  }
  auto* bn = AddNode(graph, "BatchNormalization",
                     {prefix + ".conv", prefix + ".bn.scale", prefix + ".bn.bias",
                      prefix + ".bn.mean", prefix + ".bn.var"},
                     {prefix + ".bn"});
  bn->set_name(prefix + ".bn");
  SetFloat(bn, "epsilon", block.epsilon);
  AddNode(graph, "Relu", {prefix + ".bn"}, {output})->set_name(prefix + ".relu");
  return output;
}

onnx::ModelProto Build(const DeepCnn& net, const std::string& name, bool folded) {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-noise-models", name);
  auto* graph = model.mutable_graph();
  SetType(graph->add_input(), "image", onnx::TensorProto::FLOAT,
          {{0, "batch"}, {3, nullptr}, {kSide, nullptr}, {kSide, nullptr}});
  SetType(graph->add_output(), "features", onnx::TensorProto::FLOAT,
          {{0, "batch"}, {kWidth, nullptr}, {kSide, nullptr}, {kSide, nullptr}});
  SetType(graph->add_output(), "logits", onnx::TensorProto::FLOAT,
          {{0, "batch"}, {kClasses, nullptr}});
  std::string x = "image";
  for (int b = 0; b < kBlocks; ++b) x = AddBlock(graph, b, net.blocks[b], x, folded);
  AddNode(graph, "Identity", {x}, {"features"});
  AddNode(graph, "GlobalAveragePool", {x}, {"pooled"});
  SetInt(AddNode(graph, "Flatten", {"pooled"}, {"flat"}), "axis", 1);
  AddFloatInitializer(graph, "fc.weight", {kClasses, kWidth}, net.fc_w);
  AddFloatInitializer(graph, "fc.bias", {kClasses}, net.fc_b);
  SetInt(AddNode(graph, "Gemm", {"flat", "fc.weight", "fc.bias"}, {"logits"}), "transB", 1);
  return model;
}

onnx::ModelProto ZeroMap() {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-noise-models", "zeromap");
  auto* graph = model.mutable_graph();
  SetType(graph->add_input(), "x", onnx::TensorProto::FLOAT,
          {{1, nullptr}, {3, nullptr}, {32, nullptr}, {32, nullptr}});
  SetType(graph->add_output(), "map", onnx::TensorProto::FLOAT,
          {{1, nullptr}, {1, nullptr}, {32, nullptr}, {32, nullptr}});
  SetType(graph->add_output(), "gate", onnx::TensorProto::FLOAT,
          {{1, nullptr}, {1, nullptr}, {32, nullptr}, {32, nullptr}});
  Lcg rng(44);
  AddFloatInitializer(graph, "map.weight", {1, 3, 3, 3}, rng.Vector(27, 1e-8f, 1.5e-8f));
  AddFloatInitializer(graph, "map.bias", {1}, {0.0f});
  auto* map = AddNode(graph, "Conv", {"x", "map.weight", "map.bias"}, {"map"});
  SetInts(map, "pads", {1, 1, 1, 1});
  AddFloatInitializer(graph, "gate.weight", {1, 3, 3, 3}, rng.Vector(27, 0.1f));
  AddFloatInitializer(graph, "gate.bias", {1}, {-100.0f});
  auto* gate = AddNode(graph, "Conv", {"x", "gate.weight", "gate.bias"}, {"gate.conv"});
  SetInts(gate, "pads", {1, 1, 1, 1});
  AddNode(graph, "Relu", {"gate.conv"}, {"gate"});
  return model;
}

bool Write(const std::filesystem::path& path, const onnx::ModelProto& model) {
  if (convgate::tools::WriteModel(path, model)) return true;
  std::fprintf(stderr, "convgate-make-noise-models: cannot write %s\n", path.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: convgate-make-noise-models OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "convgate-make-noise-models: cannot create %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  const DeepCnn net = MakeDeepCnn();
  DeepCnn weight = net, bias = net, channels = net, epsilon = net;
  for (float& v : weight.blocks[2].conv_w) v *= 1.01f;
  for (float& v : bias.blocks[3].conv_b) v = 0.0f;
  const size_t kernel = 9;
  for (int o = 0; o < kWidth; ++o) {  // swap input channels 0 and 1 of block 2's Conv
    float* w = channels.blocks[2].conv_w.data() + static_cast<size_t>(o) * kWidth * kernel;
    for (size_t k = 0; k < kernel; ++k) std::swap(w[k], w[kernel + k]);
  }
  epsilon.blocks[4].epsilon = 1e-1f;
  const bool ok =
      Write(dir / "deepcnn.onnx", Build(net, "deepcnn", false)) &&
      Write(dir / "deepcnn_folded.onnx", Build(net, "deepcnn_folded", true)) &&
      Write(dir / "deepcnn_fault_weight.onnx", Build(weight, "fault_weight", false)) &&
      Write(dir / "deepcnn_fault_bias.onnx", Build(bias, "fault_bias", false)) &&
      Write(dir / "deepcnn_fault_channels.onnx", Build(channels, "fault_channels", false)) &&
      Write(dir / "deepcnn_fault_epsilon.onnx", Build(epsilon, "fault_epsilon", false)) &&
      Write(dir / "zeromap.onnx", ZeroMap());
  return ok ? 0 : 1;
}
