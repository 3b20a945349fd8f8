// What precision a model computes in, read from its weights and casts rather than its outputs: a
// float16 conversion that keeps float32 inputs and outputs (keep_io_types) still rounds every
// layer to float16, and must be judged as a float16 network, not by float32's defaults.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "convgate/core/dtype.h"
#include "convgate/core/status.h"

namespace convgate::graph {

struct ComputePrecision {
  // Floating weights by dtype, in elements: ONNX initializers and Constant nodes of the main
  // graph, or an OpenVINO IR's Const layers.
  int64_t float32_weights = 0;
  int64_t float16_weights = 0;
  int64_t bfloat16_weights = 0;
  // ONNX Cast nodes to, or IR Convert layers with destination type, float16 / bfloat16.
  int64_t casts_to_float16 = 0;
  int64_t casts_to_bfloat16 = 0;
  // Nodes that quantize, dequantize or compute on quantized integers (IsQuantizationOp), or an
  // IR's FakeQuantize and FakeConvert layers (NNCF's int8).
  int64_t quantization_ops = 0;

  // float16 or bfloat16 when most floating weights are in it; nullopt otherwise.
  std::optional<DType> Reduced() const;
  // "81% of 11.7M floating weights are float16, 4 Casts to float16"
  std::string Describe() const;
};

// An op that exists to quantize or dequantize, or to compute on quantized integers: ONNX's
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinear*,
// and ONNX Runtime's contrib forms of them (any domain).
bool IsQuantizationOp(std::string_view op_type);

// Reads an ONNX model's structure (no weight data) or an OpenVINO IR's .xml. DataLoss / NotFound
// naming `path` when it is neither readable.
Result<ComputePrecision> ReadComputePrecision(const std::filesystem::path& path);
// The same from an IR's XML text: its Const layers' element types and its Convert layers.
ComputePrecision IrComputePrecision(std::string_view xml);

}  // namespace convgate::graph
