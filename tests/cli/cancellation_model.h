// A model whose result cancels catastrophically in reduced precision, for the repair tests:
// y = ((x + 1000) - 1000) @ w is exact in float32 for x in [0, 1), while bfloat16 holds x + 1000
// only to a multiple of 4 and int8 quantizes it in steps of about 4 (its range is [0, 1001]), so
// the subtraction leaves 0 or 4 instead of x. Nodes: shift (Add), unshift (Sub), project (MatMul).
#pragma once

#include <filesystem>
#include <string>

#include "graph/onnx_test_util.h"

namespace convgate::testing {

inline std::string WriteCancellationModel(const std::filesystem::path& path) {
  onnx::ModelProto model = ParseOnnxText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    cancel (float[1, 64] x) => (float[1, 8] y) {
      c = Constant <value = float[1] {1000.0}> ()
      shifted = Add(x, c)
      back = Sub(shifted, c)
      y = MatMul(back, w)
    }
  )");
  onnx::TensorProto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(64);
  w->add_dims(8);
  for (int i = 0; i < 64 * 8; ++i) w->add_float_data(0.05f * static_cast<float>(i % 7) - 0.15f);
  model.mutable_graph()->mutable_node(1)->set_name("shift");
  model.mutable_graph()->mutable_node(2)->set_name("unshift");
  model.mutable_graph()->mutable_node(3)->set_name("project");
  WriteModel(model, path);
  return path.string();
}

}  // namespace convgate::testing
