// Writes the models behind the benchmark tests (`convgate bench`, --benchmark, the speed gates),
// from code (fixed-seed weights), so no model file is ever committed.
//
//   convgate-make-speed-models OUT_DIR
//
// speed_base.onnx   "x" [1, 32, 32, 32] -> three Conv 3x3 (32 channels) + Relu blocks -> "y".
// speed_slow.onnx   the same "y" (bit for bit), plus a heavy branch of 24 more blocks on "x"
//                   whose result is multiplied by 0 and added: a conversion that made the model
//                   ~9x slower without changing what it computes.
// speed_fast.onnx   one block: fewer ops, ~3x faster (its "y" differs; for speed alone).
#include <onnx/onnx_pb.h>

#include <cmath>
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
using convgate::tools::SetInts;
using convgate::tools::SetType;

constexpr int kChannels = 32;
constexpr int kSide = 32;

// A Conv 3x3 (same padding) + Relu block from `in` to `out`; weights scaled so activations stay
// near 1 through any number of blocks.
void AddBlock(onnx::GraphProto* graph, Lcg& lcg, const std::string& in, const std::string& out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(kChannels * 9));
  AddFloatInitializer(graph, out + "_w", {kChannels, kChannels, 3, 3},
                      lcg.Vector(kChannels * kChannels * 9, scale));
  AddFloatInitializer(graph, out + "_b", {kChannels}, lcg.Vector(kChannels, 0.01f));
  auto* conv = AddNode(graph, "Conv", {in, out + "_w", out + "_b"}, {out + "_conv"});
  SetInts(conv, "kernel_shape", {3, 3});
  SetInts(conv, "pads", {1, 1, 1, 1});
  AddNode(graph, "Relu", {out + "_conv"}, {out});
}

// `blocks` blocks from "x"; the last one's output is `last`.
void AddChain(onnx::GraphProto* graph, Lcg& lcg, int blocks, const std::string& prefix,
              const std::string& last) {
  std::string in = "x";
  for (int b = 0; b < blocks; ++b) {
    const std::string out = b + 1 == blocks ? last : prefix + std::to_string(b);
    AddBlock(graph, lcg, in, out);
    in = out;
  }
}

onnx::ModelProto NewSpeedModel(const std::string& name) {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-speed-models", name);
  onnx::GraphProto* graph = model.mutable_graph();
  SetType(graph->add_input(), "x", onnx::TensorProto::FLOAT,
          {{1, nullptr}, {kChannels, nullptr}, {kSide, nullptr}, {kSide, nullptr}});
  SetType(graph->add_output(), "y", onnx::TensorProto::FLOAT,
          {{1, nullptr}, {kChannels, nullptr}, {kSide, nullptr}, {kSide, nullptr}});
  return model;
}

onnx::ModelProto Base(bool heavy_branch) {
  onnx::ModelProto model = NewSpeedModel(heavy_branch ? "speed_slow" : "speed_base");
  onnx::GraphProto* graph = model.mutable_graph();
  Lcg lcg(17);
  if (!heavy_branch) {
    AddChain(graph, lcg, 3, "main", "y");
    return model;
  }
  AddChain(graph, lcg, 3, "main", "main_out");
  Lcg heavy(29);
  AddChain(graph, heavy, 24, "heavy", "heavy_out");
  AddFloatInitializer(graph, "zero", {}, {0.0f});
  AddNode(graph, "Mul", {"heavy_out", "zero"}, {"heavy_zeroed"});
  AddNode(graph, "Add", {"main_out", "heavy_zeroed"}, {"y"});
  return model;
}

onnx::ModelProto Fast() {
  onnx::ModelProto model = NewSpeedModel("speed_fast");
  Lcg lcg(17);
  AddChain(model.mutable_graph(), lcg, 1, "main", "y");
  return model;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: convgate-make-speed-models OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const bool ok = convgate::tools::WriteModel(dir / "speed_base.onnx", Base(false)) &&
                  convgate::tools::WriteModel(dir / "speed_slow.onnx", Base(true)) &&
                  convgate::tools::WriteModel(dir / "speed_fast.onnx", Fast());
  if (!ok) {
    std::fprintf(stderr, "convgate-make-speed-models: cannot write into %s\n", argv[1]);
    return 1;
  }
  return 0;
}
