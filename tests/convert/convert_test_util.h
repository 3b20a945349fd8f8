// Helpers for the conversion tests: tiny models from ONNX text, running them in ONNX Runtime,
// and a private cache directory per test.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::testing {

// "{v0, v1, ...}": `count` deterministic values in [low, high) for ONNX text tensor literals.
std::string FloatLiteral(int count, float low = -1.0f, float high = 1.0f, uint32_t seed = 1);

// Loads `path` in ONNX Runtime and runs it once on deterministic float inputs in [0.1, 1.1)
// (every input must be float with a fixed shape). Unimplemented when ORT is not built in.
Result<TensorMap> RunInOrt(const std::filesystem::path& path);

// The largest |a - b| over two float32 outputs of the same shape (float16 outputs are widened);
// +inf when shapes or dtypes do not fit together.
double MaxAbsDiff(const Tensor& a, const Tensor& b);

// The elem_type of the graph value (input, output or value_info of the main graph) named `name`;
// 0 when there is none.
int ElemTypeOf(const onnx::GraphProto& graph, const std::string& name);

}  // namespace convgate::testing
