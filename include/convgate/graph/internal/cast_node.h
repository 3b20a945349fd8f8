// A Cast node, as the rewrites that change a model's precision insert them (convert's fp16/bf16
// walk, the bfloat16 emulation). Internal: shared by graph and convert.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace convgate::graph {

// Cast(`input`) -> `output` to element type `to` (onnx::TensorProto::DataType), named `name`.
onnx::NodeProto MakeCast(const std::string& input, const std::string& output, int to,
                         const std::string& name);

}  // namespace convgate::graph
