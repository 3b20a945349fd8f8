#include "graph/onnx_types.h"

#include <array>
#include <string_view>

namespace convgate::graph {
namespace {

struct ElemTypeEntry {
  int32_t elem_type;
  std::string_view onnx_name;
  int bits;
  std::optional<DType> dtype;
};

// TensorProto.DataType values. Debian's libonnx 1.12 stops at BFLOAT16 (16); the later values
// (float8 from ONNX 1.14, int4 from 1.16, float4 from 1.18, float8e8m0 and int2 from 1.20) are
// spelled out so that newer models are described instead of shown as numbers.
constexpr std::array<ElemTypeEntry, 26> kElemTypes = {{
    {1, "float", 32, DType::kFloat32},     {2, "uint8", 8, DType::kUInt8},
    {3, "int8", 8, DType::kInt8},          {4, "uint16", 16, DType::kUInt16},
    {5, "int16", 16, DType::kInt16},       {6, "int32", 32, DType::kInt32},
    {7, "int64", 64, DType::kInt64},       {8, "string", 0, DType::kString},
    {9, "bool", 8, DType::kBool},          {10, "float16", 16, DType::kFloat16},
    {11, "double", 64, DType::kFloat64},   {12, "uint32", 32, DType::kUInt32},
    {13, "uint64", 64, DType::kUInt64},    {14, "complex64", 64, std::nullopt},
    {15, "complex128", 128, std::nullopt}, {16, "bfloat16", 16, DType::kBFloat16},
    {17, "float8e4m3fn", 8, std::nullopt}, {18, "float8e4m3fnuz", 8, std::nullopt},
    {19, "float8e5m2", 8, std::nullopt},   {20, "float8e5m2fnuz", 8, std::nullopt},
    {21, "uint4", 4, std::nullopt},        {22, "int4", 4, std::nullopt},
    {23, "float4e2m1", 4, std::nullopt},   {24, "float8e8m0", 8, std::nullopt},
}};

const ElemTypeEntry* FindElemType(int32_t elem_type) {
  for (const ElemTypeEntry& entry : kElemTypes) {
    if (entry.elem_type == elem_type) return &entry;
  }
  return nullptr;
}

std::vector<Dim> DimsFromShape(const onnx::TensorShapeProto& shape) {
  std::vector<Dim> dims;
  dims.reserve(static_cast<size_t>(shape.dim_size()));
  for (const onnx::TensorShapeProto::Dimension& dim : shape.dim()) {
    if (dim.has_dim_value()) {
      dims.push_back(Dim::Fixed(dim.dim_value()));
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      dims.push_back(Dim::Symbolic(dim.dim_param()));
    } else {
      dims.push_back(Dim::Unknown());
    }
  }
  return dims;
}

}  // namespace

std::optional<DType> DTypeFromOnnx(int32_t elem_type) {
  const ElemTypeEntry* entry = FindElemType(elem_type);
  return entry ? entry->dtype : std::nullopt;
}

std::string OnnxElemTypeName(int32_t elem_type) {
  const ElemTypeEntry* entry = FindElemType(elem_type);
  if (entry) return std::string(entry->onnx_name);
  return "elem_type(" + std::to_string(elem_type) + ")";
}

int OnnxElemTypeBits(int32_t elem_type) {
  const ElemTypeEntry* entry = FindElemType(elem_type);
  return entry ? entry->bits : 0;
}

std::string OnnxTypeString(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return "tensor(" + OnnxElemTypeName(type.tensor_type().elem_type()) + ")";
    case onnx::TypeProto::kSequenceType:
      return "seq(" + OnnxTypeString(type.sequence_type().elem_type()) + ")";
    case onnx::TypeProto::kOptionalType:
      return "optional(" + OnnxTypeString(type.optional_type().elem_type()) + ")";
    case onnx::TypeProto::kMapType:
      return "map(" + OnnxElemTypeName(type.map_type().key_type()) + "," +
             OnnxTypeString(type.map_type().value_type()) + ")";
    case onnx::TypeProto::kSparseTensorType:
      return "sparse_tensor(" + OnnxElemTypeName(type.sparse_tensor_type().elem_type()) + ")";
    default:
      return "undefined";
  }
}

TensorInfo TensorInfoFromValueInfo(const onnx::ValueInfoProto& value_info) {
  TensorInfo info;
  info.name = value_info.name();
  const onnx::TypeProto& type = value_info.type();
  if (type.value_case() != onnx::TypeProto::kTensorType) {
    info.type_name = OnnxTypeString(type);
    return info;
  }
  const int32_t elem_type = type.tensor_type().elem_type();
  info.dtype = DTypeFromOnnx(elem_type);
  info.type_name = info.dtype ? std::string(DTypeName(*info.dtype)) : OnnxElemTypeName(elem_type);
  if (type.tensor_type().has_shape()) {
    info.has_shape = true;
    info.shape = DimsFromShape(type.tensor_type().shape());
  }
  return info;
}

}  // namespace convgate::graph
