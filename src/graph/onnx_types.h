// Conversions from ONNX type protos to convgate's DType and TensorInfo (internal to src/graph).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>

#include "convgate/core/dtype.h"
#include "convgate/core/signature.h"

namespace convgate::graph {

// The DType of an ONNX TensorProto.DataType value (STRING is DType::kString); nullopt for types
// convgate cannot hold (complex, float8, int4, ...) and for values newer than this table.
std::optional<DType> DTypeFromOnnx(int32_t elem_type);

// ONNX's spelling of an element type as in "tensor(float)": "float", "float16", "string",
// "float8e4m3fn", ...; "elem_type(N)" for values this table does not know.
std::string OnnxElemTypeName(int32_t elem_type);

// Storage bits per element (4 for int4/float4, 2 for int2, which pack 2 and 4 per byte); 0 for
// string and unknown types, whose size is not a function of the element count.
int OnnxElemTypeBits(int32_t elem_type);

// A node of the default ONNX domain ("" or "ai.onnx").
inline bool IsDefaultDomain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

// ONNX's type string: "tensor(float)", "seq(tensor(float))", "optional(tensor(int64))",
// "map(int64,tensor(float))", "sparse_tensor(float)"; "undefined" for an empty TypeProto.
std::string OnnxTypeString(const onnx::TypeProto& type);

// Name, dtype, type_name and declared shape of a graph input or output. Tensors convgate can hold
// get dtype and the numpy spelling ("float32", "string"); other tensors get dtype nullopt and
// ONNX's element spelling ("complex64"); non-tensors get OnnxTypeString() and no shape.
TensorInfo TensorInfoFromValueInfo(const onnx::ValueInfoProto& value_info);

}  // namespace convgate::graph
