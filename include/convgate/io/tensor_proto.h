// ONNX TensorProto files (.pb), as in ONNX test cases (test_data_set_N/input_K.pb).
//
// Reads raw_data and the typed fields (float_data, double_data, int32_data for int8/16/uint8/16/
// bool/float16/bfloat16 as the ONNX spec packs them, int64_data, uint64_data, string_data). ONNX
// 1.12's test data stores some bfloat16 tensors as UINT16: they are read as uint16 and the caller
// may reinterpret them (see ReinterpretAs). Bool values other than 0 read as 1. STRING tensors
// become DType::kString with each string's bytes as stored (ONNX forbids raw_data for them).
//
// Unimplemented, naming the file, the tensor and the type: element types convgate cannot hold
// (complex, float8, 4-bit), external data, segmented tensors, and protos that are not
// tensors at all. Sequence, optional and map .pb files often parse as a TensorProto anyway
// (protobuf is lenient); they are recognised by data_type UNDEFINED, a segment (where their
// contained values land), dims without data, or a string in field 1 (their name, where a tensor
// has dims) together with a failed data check, and reported as "not a tensor".
//
// DataLoss, naming the file and the tensor: bytes protobuf cannot parse, negative or overflowing
// dims, a value count or raw_data size that does not match the dims, more than one value field or
// the wrong one for the type (the rules of onnx's checker). Nothing is allocated for a tensor
// before its data has been checked against its dims.
//
// FailedPrecondition, naming the file and the tensor: a tensor larger than
// limits.max_tensor_bytes (checked before it is allocated), and (ReadTensorProto) a path that is
// not a regular file (a FIFO, a device) or is over 2 GiB, which protobuf cannot parse.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "convgate/core/limits.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io {

struct NamedTensorProto {
  std::string name;  // TensorProto.name; may be empty
  Tensor tensor;
};

Result<NamedTensorProto> ParseTensorProto(std::string_view bytes, std::string_view what,
                                          const Limits& limits = Limits());
Result<NamedTensorProto> ReadTensorProto(const std::filesystem::path& path,
                                         const Limits& limits = Limits());

// Serialized TensorProto with raw_data (little-endian), dims and name; string tensors use
// string_data, as ONNX requires.
// REQUIRES: the data is under 2 GiB (protobuf's message limit); WriteTensorProto checks it.
std::string SerializeTensorProto(const Tensor& tensor, std::string_view name);
Status WriteTensorProto(const std::filesystem::path& path, const Tensor& tensor,
                        std::string_view name);

// Converts between the ONNX TensorProto.DataType numbering and DType. nullopt / 0 when unsupported.
std::optional<DType> DTypeFromOnnx(int onnx_elem_type);
int OnnxFromDType(DType dtype);
// Name of an ONNX element type for messages: "FLOAT", "STRING", "COMPLEX64", ... ("type 42").
std::string OnnxElemTypeName(int onnx_elem_type);

// Same bytes, a dtype of the same element size (uint16 -> bfloat16 for ONNX 1.12 test data).
// InvalidArgument for string tensors and string targets.
Result<Tensor> ReinterpretAs(Tensor tensor, DType dtype);

}  // namespace convgate::io
