// Running a bfloat16 model where no runtime here computes in bfloat16. ONNX Runtime's CPU
// provider has no bfloat16 kernels (Conv, MatMul, Add, Relu... all refuse to load), yet its Cast
// converts to and from bfloat16 exactly (round to nearest even). The emulated model computes every
// op in float32 and rounds each bfloat16 value to bfloat16 as it is stored: what bfloat16
// hardware does (AVX512-BF16 and AMX multiply bfloat16 and accumulate in float32), up to the
// order of the rounding inside one op. Internal: for the ONNX Runtime backend.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

#include "convgate/core/status.h"

namespace convgate::graph {

// Whether `graph` (its subgraphs included) has a bfloat16 value: an initializer, a declared value,
// or a Cast/RandomX/... producing one (`to`/`dtype` attributes).
bool UsesBfloat16(const onnx::GraphProto& graph);

struct Bfloat16Emulation {
  int rounded_values = 0;        // node outputs rounded to bfloat16 (a Cast pair each)
  int widened_initializers = 0;  // bfloat16 weights held as float32 (exact)
};

// Rewrites `model` in place: bfloat16 initializers and Constant tensors become float32 (exactly),
// each op with a bfloat16 output computes in float32 and its output passes through Cast to
// bfloat16 and back (moves of data, such as Reshape or Transpose, need no rounding), a bfloat16
// graph input is cast to float32 as it enters, and a bfloat16 graph output is cast to bfloat16 as
// it leaves, so the model keeps its interface. Value names are kept: intermediate values are
// the rounded ones. If/Loop/Scan bodies are rewritten the same way, their bfloat16 inputs and
// outputs made float32 (a body's outputs are rounded too, being no interface). Unimplemented for
// external data not loaded first (`path` names the model in errors).
Result<Bfloat16Emulation> EmulateBfloat16(onnx::ModelProto& model,
                                          const std::filesystem::path& path);

}  // namespace convgate::graph
