// Writes the small ONNX models that the README example and the CLI tests use, from code, so no
// model file is ever committed. Every model is deterministic (fixed-seed weights).
//
//   convgate-make-models OUT_DIR
//
// tinycnn.onnx            Conv -> BatchNormalization -> Relu -> GlobalAveragePool -> Flatten
//                         -> Gemm -> "logits" [batch, 10] -> Softmax -> "probs";
//                         input "image" [batch, 3, 16, 16]
// tinycnn_converted.onnx  what a converter makes of it: BatchNorm folded into the Conv weights,
//                         Gemm lowered to MatMul + Add (same function, different float rounding)
// tinycnn_perturbed.onnx  the classifier weight scaled by 1.01 (a silently wrong conversion)
// tinycnn_nan.onnx        one BatchNorm variance made negative: sqrt(var + eps) is NaN
// tinycnn_badshape.onnx   the converted model, but "logits" declared [batch, 12] (it is
//                         [batch, 10])
// tinycnn_weights.npz     tinycnn's weights as numpy arrays, for examples/exec/numpy_runner.py
//                         (tinycnn in numpy: a runtime convgate reaches only through `exec`)
// tokens.onnx             int64 "ids" [batch, seq] -> Gather(embedding) -> ReduceMean; bool
//                         "mask" -> Where; exercises integer and bool inputs and two symbolic dims
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "convgate/io/npz.h"
#include "lcg.h"
#include "onnx_builder.h"

namespace {

using convgate::tools::AddFloatInitializer;
using convgate::tools::AddInt64Initializer;
using convgate::tools::AddNode;
using convgate::tools::Lcg;
using convgate::tools::SetFloat;
using convgate::tools::SetInt;
using convgate::tools::SetInts;
using convgate::tools::SetType;
constexpr int kChannels = 8;
constexpr int kClasses = 10;

// The weights every tinycnn variant is made from.
struct TinyCnnWeights {
  std::vector<float> conv_w, conv_b;                      // [8, 3, 3, 3], [8]
  std::vector<float> bn_scale, bn_bias, bn_mean, bn_var;  // [8] each
  std::vector<float> fc_w, fc_b;                          // Gemm B [10, 8] (transB=1), [10]
  float bn_epsilon = 1e-5f;
};

TinyCnnWeights MakeWeights() {
  Lcg rng(20261125);
  TinyCnnWeights w;
  w.conv_w = rng.Vector(kChannels * 3 * 3 * 3, 0.4f);
  w.conv_b = rng.Vector(kChannels, 0.1f);
  // Non-trivial BatchNorm statistics, so folding it away changes the arithmetic (neutral
  // BatchNorms hide conversion bugs: docs/architecture.md, Pitfalls).
  w.bn_scale = rng.Vector(kChannels, 0.5f, 1.0f);
  w.bn_bias = rng.Vector(kChannels, 0.2f);
  w.bn_mean = rng.Vector(kChannels, 0.3f);
  w.bn_var = rng.Vector(kChannels, 0.4f, 0.6f);
  w.fc_w = rng.Vector(kClasses * kChannels, 1.0f);
  w.fc_b = rng.Vector(kClasses, 0.1f);
  return w;
}

void AddTinyCnnIo(onnx::GraphProto* graph, int64_t declared_classes) {
  SetType(graph->add_input(), "image", onnx::TensorProto::FLOAT,
          {{0, "batch"}, {3, nullptr}, {16, nullptr}, {16, nullptr}});
  SetType(graph->add_output(), "logits", onnx::TensorProto::FLOAT,
          {{0, "batch"}, {declared_classes, nullptr}});
  SetType(graph->add_output(), "probs", onnx::TensorProto::FLOAT,
          {{0, "batch"}, {kClasses, nullptr}});
}

void AddConv(onnx::GraphProto* graph, const std::vector<float>& weight,
             const std::vector<float>& bias, const std::string& output) {
  AddFloatInitializer(graph, "conv.weight", {kChannels, 3, 3, 3}, weight);
  AddFloatInitializer(graph, "conv.bias", {kChannels}, bias);
  auto* conv = AddNode(graph, "Conv", {"image", "conv.weight", "conv.bias"}, {output});
  SetInts(conv, "kernel_shape", {3, 3});
  SetInts(conv, "pads", {1, 1, 1, 1});
}

void AddHeadAfterRelu(onnx::GraphProto* graph, const std::string& relu_input) {
  AddNode(graph, "Relu", {relu_input}, {"relu"});
  AddNode(graph, "GlobalAveragePool", {"relu"}, {"pooled"});
  SetInt(AddNode(graph, "Flatten", {"pooled"}, {"features"}), "axis", 1);
}

onnx::ModelProto TinyCnn(const TinyCnnWeights& w) {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-models", "tinycnn");
  auto* graph = model.mutable_graph();
  AddTinyCnnIo(graph, kClasses);
  AddConv(graph, w.conv_w, w.conv_b, "conv");
  AddFloatInitializer(graph, "bn.scale", {kChannels}, w.bn_scale);
  AddFloatInitializer(graph, "bn.bias", {kChannels}, w.bn_bias);
  AddFloatInitializer(graph, "bn.mean", {kChannels}, w.bn_mean);
  AddFloatInitializer(graph, "bn.var", {kChannels}, w.bn_var);
  SetFloat(AddNode(graph, "BatchNormalization",
                   {"conv", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"bn"}),
           "epsilon", w.bn_epsilon);
  AddHeadAfterRelu(graph, "bn");
  AddFloatInitializer(graph, "fc.weight", {kClasses, kChannels}, w.fc_w);
  AddFloatInitializer(graph, "fc.bias", {kClasses}, w.fc_b);
  SetInt(AddNode(graph, "Gemm", {"features", "fc.weight", "fc.bias"}, {"logits"}), "transB", 1);
  SetInt(AddNode(graph, "Softmax", {"logits"}, {"probs"}), "axis", 1);
  return model;
}

// BatchNorm folded into the Conv (computed in double, stored as float) and Gemm lowered to
// MatMul + Add with the weight transposed: the rewrites real converters and optimizers perform.
onnx::ModelProto TinyCnnConverted(const TinyCnnWeights& w, int64_t declared_classes) {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-models", "tinycnn_converted");
  auto* graph = model.mutable_graph();
  AddTinyCnnIo(graph, declared_classes);
  std::vector<float> weight(w.conv_w.size()), bias(kChannels);
  const size_t per_channel = w.conv_w.size() / kChannels;
  for (int c = 0; c < kChannels; ++c) {
    const double factor = w.bn_scale[c] / std::sqrt(double{w.bn_var[c]} + w.bn_epsilon);
    for (size_t k = 0; k < per_channel; ++k) {
      weight[c * per_channel + k] = static_cast<float>(w.conv_w[c * per_channel + k] * factor);
    }
    bias[c] = static_cast<float>((w.conv_b[c] - w.bn_mean[c]) * factor + w.bn_bias[c]);
  }
  AddConv(graph, weight, bias, "conv");
  AddHeadAfterRelu(graph, "conv");
  std::vector<float> transposed(w.fc_w.size());
  for (int o = 0; o < kClasses; ++o) {
    for (int i = 0; i < kChannels; ++i) transposed[i * kClasses + o] = w.fc_w[o * kChannels + i];
  }
  AddFloatInitializer(graph, "fc.weight_t", {kChannels, kClasses}, transposed);
  AddFloatInitializer(graph, "fc.bias", {kClasses}, w.fc_b);
  AddNode(graph, "MatMul", {"features", "fc.weight_t"}, {"fc.matmul"});
  AddNode(graph, "Add", {"fc.matmul", "fc.bias"}, {"logits"});
  SetInt(AddNode(graph, "Softmax", {"logits"}, {"probs"}), "axis", 1);
  return model;
}

onnx::ModelProto Tokens() {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-models", "tokens");
  auto* graph = model.mutable_graph();
  SetType(graph->add_input(), "ids", onnx::TensorProto::INT64, {{0, "batch"}, {0, "seq"}});
  SetType(graph->add_input(), "mask", onnx::TensorProto::BOOL, {{0, "batch"}, {0, "seq"}});
  SetType(graph->add_output(), "pooled", onnx::TensorProto::FLOAT, {{0, "batch"}, {4, nullptr}});
  SetType(graph->add_output(), "kept", onnx::TensorProto::INT64, {{0, "batch"}, {0, "seq"}});
  Lcg rng(7);
  AddFloatInitializer(graph, "embedding", {16, 4}, rng.Vector(16 * 4, 1.0f));
  AddInt64Initializer(graph, "zero", {}, {0});
  SetInt(AddNode(graph, "Gather", {"embedding", "ids"}, {"embedded"}), "axis", 0);
  SetInt(AddNode(graph, "ReduceMean", {"embedded"}, {"pooled_keep"}), "keepdims", 0);
  SetInts(graph->mutable_node(graph->node_size() - 1), "axes", {1});
  AddNode(graph, "Identity", {"pooled_keep"}, {"pooled"});
  AddNode(graph, "Where", {"mask", "ids", "zero"}, {"kept"});
  return model;
}

// The arrays numpy_runner.py computes tinycnn from, named after the ONNX initializers.
bool WriteWeights(const std::filesystem::path& path, const TinyCnnWeights& w) {
  using convgate::DType;
  using convgate::Shape;
  using convgate::Tensor;
  auto vector = [](const std::vector<float>& values, Shape shape) {
    return Tensor::FromVector<float>(DType::kFloat32, std::move(shape), values);
  };
  convgate::TensorMap arrays;
  arrays.InsertOrAssign("conv.weight", vector(w.conv_w, Shape::Of({kChannels, 3, 3, 3})));
  arrays.InsertOrAssign("conv.bias", vector(w.conv_b, Shape::Of({kChannels})));
  arrays.InsertOrAssign("bn.scale", vector(w.bn_scale, Shape::Of({kChannels})));
  arrays.InsertOrAssign("bn.bias", vector(w.bn_bias, Shape::Of({kChannels})));
  arrays.InsertOrAssign("bn.mean", vector(w.bn_mean, Shape::Of({kChannels})));
  arrays.InsertOrAssign("bn.var", vector(w.bn_var, Shape::Of({kChannels})));
  arrays.InsertOrAssign("bn.epsilon", vector({w.bn_epsilon}, Shape()));
  arrays.InsertOrAssign("fc.weight", vector(w.fc_w, Shape::Of({kClasses, kChannels})));
  arrays.InsertOrAssign("fc.bias", vector(w.fc_b, Shape::Of({kClasses})));
  convgate::Status status = convgate::io::WriteNpz(path, arrays);
  if (status.ok()) return true;
  std::fprintf(stderr, "convgate-make-models: %s\n", status.ToString().c_str());
  return false;
}

bool Write(const std::filesystem::path& path, const onnx::ModelProto& model) {
  if (convgate::tools::WriteModel(path, model)) return true;
  std::fprintf(stderr, "convgate-make-models: cannot write %s\n", path.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: convgate-make-models OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "convgate-make-models: cannot create %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  const TinyCnnWeights weights = MakeWeights();
  TinyCnnWeights perturbed = weights;
  for (float& v : perturbed.fc_w) v *= 1.01f;
  TinyCnnWeights nan_weights = weights;
  nan_weights.bn_var[3] = -1.0f;
  bool ok = Write(dir / "tinycnn.onnx", TinyCnn(weights)) &&
            Write(dir / "tinycnn_converted.onnx", TinyCnnConverted(weights, kClasses)) &&
            Write(dir / "tinycnn_perturbed.onnx", TinyCnn(perturbed)) &&
            Write(dir / "tinycnn_nan.onnx", TinyCnn(nan_weights)) &&
            Write(dir / "tinycnn_badshape.onnx", TinyCnnConverted(weights, 12)) &&
            Write(dir / "tokens.onnx", Tokens()) &&
            WriteWeights(dir / "tinycnn_weights.npz", weights);
  return ok ? 0 : 1;
}
