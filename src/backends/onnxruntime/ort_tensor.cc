#include "backends/onnxruntime/ort_tensor.h"

#include <array>
#include <cstring>
#include <span>
#include <vector>

namespace convgate::backends {
namespace {

struct TypePair {
  DType dtype;
  ONNXTensorElementDataType ort;
};

// fp16 and bf16 travel as their 16-bit patterns, which is also how ORT stores them; ORT's bool is
// one byte like convgate's. Strings are copied element by element (see OrtInputValue).
constexpr std::array<TypePair, 14> kTypePairs = {{
    {DType::kFloat32, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT},
    {DType::kFloat64, ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE},
    {DType::kFloat16, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16},
    {DType::kBFloat16, ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16},
    {DType::kInt8, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8},
    {DType::kInt16, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16},
    {DType::kInt32, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32},
    {DType::kInt64, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64},
    {DType::kUInt8, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8},
    {DType::kUInt16, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16},
    {DType::kUInt32, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32},
    {DType::kUInt64, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64},
    {DType::kBool, ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL},
    {DType::kString, ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING},
}};

const OrtMemoryInfo* CpuMemoryInfo() {
  // Describes plain host memory; created once because every input of every run needs it.
  static const Ort::MemoryInfo info =
      Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
  return info;
}

std::string OnnxTypeName(ONNXType type) {
  switch (type) {
    case ONNX_TYPE_SEQUENCE:
      return "a sequence";
    case ONNX_TYPE_MAP:
      return "a map";
    case ONNX_TYPE_OPTIONAL:
      return "an optional";
    case ONNX_TYPE_SPARSETENSOR:
      return "a sparse tensor";
    default:
      return "not a tensor";
  }
}

// ORT owns string tensors' elements (std::string inside the value), so they cannot be viewed like
// numbers: ORT's allocator makes the tensor and each element is copied in. The resized-buffer call
// takes a length, so strings with NUL bytes arrive whole (FillStringTensor would cut them).
Ort::Value OrtStringValue(const Tensor& tensor) {
  const std::vector<int64_t>& dims = tensor.shape().dims();
  Ort::AllocatorWithDefaultOptions allocator;
  Ort::Value value = Ort::Value::CreateTensor(allocator, dims.data(), dims.size(),
                                              ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING);
  const std::span<const std::string> strings = tensor.strings();
  for (size_t flat = 0; flat < strings.size(); ++flat) {
    if (strings[flat].empty()) continue;  // elements start out empty
    char* buffer = value.GetResizedStringTensorElementBuffer(flat, strings[flat].size());
    std::memcpy(buffer, strings[flat].data(), strings[flat].size());
  }
  return value;
}

Result<Tensor> TensorFromOrtStrings(const Ort::Value& value, Shape shape) {
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(DType::kString, std::move(shape)));
  const std::span<std::string> strings = tensor.strings();
  for (size_t flat = 0; flat < strings.size(); ++flat) {
    strings[flat] = value.GetStringTensorElement(flat);
  }
  return tensor;
}

}  // namespace

ONNXTensorElementDataType OrtElementType(DType dtype) {
  for (const TypePair& pair : kTypePairs) {
    if (pair.dtype == dtype) return pair.ort;
  }
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

std::optional<DType> DTypeFromOrt(ONNXTensorElementDataType element_type) {
  for (const TypePair& pair : kTypePairs) {
    if (pair.ort == element_type) return pair.dtype;
  }
  return std::nullopt;
}

std::string OrtElementTypeName(ONNXTensorElementDataType element_type) {
  if (std::optional<DType> dtype = DTypeFromOrt(element_type)) {
    return std::string(DTypeName(*dtype));
  }
  switch (element_type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64:
      return "complex64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128:
      return "complex128";
    default:
      return "element type " + std::to_string(static_cast<int>(element_type));
  }
}

Ort::Value OrtInputValue(const Tensor& tensor) {
  if (tensor.dtype() == DType::kString) return OrtStringValue(tensor);
  const std::vector<int64_t>& dims = tensor.shape().dims();
  if (!tensor.IsAligned()) {
    // Adopted memory (an .npz member read in place, io/npz.h) need not suit the element type;
    // ORT's kernels assume it does, so such an input gets an aligned copy of its own.
    Ort::AllocatorWithDefaultOptions allocator;
    Ort::Value value = Ort::Value::CreateTensor(allocator, dims.data(), dims.size(),
                                                OrtElementType(tensor.dtype()));
    std::memcpy(value.GetTensorMutableRawData(), tensor.bytes().data(), tensor.byte_size());
    return value;
  }
  // ORT's API takes a mutable pointer for inputs and outputs alike; it only reads inputs.
  void* data = const_cast<std::byte*>(tensor.bytes().data());
  return Ort::Value::CreateTensor(CpuMemoryInfo(), data, tensor.byte_size(), dims.data(),
                                  dims.size(), OrtElementType(tensor.dtype()));
}

Result<Tensor> TensorFromOrtValue(Ort::Value value, const std::string& name) {
  if (!value.IsTensor()) {
    return Status::Unimplemented("output '" + name + "' is " +
                                 OnnxTypeName(value.GetTypeInfo().GetONNXType()) +
                                 "; convgate handles tensor outputs only");
  }
  const Ort::TensorTypeAndShapeInfo info = value.GetTensorTypeAndShapeInfo();
  const std::optional<DType> dtype = DTypeFromOrt(info.GetElementType());
  if (!dtype) {
    return Status::Unimplemented("output '" + name + "' has element type " +
                                 OrtElementTypeName(info.GetElementType()) +
                                 ", which convgate cannot hold");
  }
  Result<Shape> shape = Shape::Make(info.GetShape());
  if (!shape.ok()) return shape.status().WithContext("output '" + name + "'");
  if (*dtype == DType::kString) return TensorFromOrtStrings(value, std::move(shape).value());
  const size_t byte_size = static_cast<size_t>(shape->NumElements()) * DTypeSize(*dtype);
  // ORT may hand out a null buffer for an empty tensor.
  if (byte_size == 0) return Tensor::Allocate(*dtype, std::move(shape).value());
  // The tensor takes ORT's buffer over instead of copying it: outputs and, with --per-node, every
  // intermediate would otherwise be held twice until the copy is done.
  auto owner = std::make_shared<Ort::Value>(std::move(value));
  std::byte* data = static_cast<std::byte*>(owner->GetTensorMutableRawData());
  return Tensor::Adopt(*dtype, std::move(shape).value(), std::span<std::byte>(data, byte_size),
                       std::move(owner));
}

}  // namespace convgate::backends
