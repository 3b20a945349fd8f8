#include "convgate/io/tensor_proto.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/core/units.h"
#include "io/byte_order.h"

namespace convgate::io {
namespace {

static_assert(std::endian::native == std::endian::little, "raw_data is little-endian");

// TensorProto.DataType numbers from onnx.proto; names as the enum spells them. Types added after
// ONNX 1.12 (float8, 4-bit) are listed so messages name them even though libonnx 1.12 does not.
constexpr std::string_view kOnnxTypeNames[] = {
    "UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
    "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
    "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
    "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
    "FLOAT8E5M2FNUZ", "UINT4",    "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0",
};

struct OnnxTypeMapping {
  int onnx_type;
  DType dtype;
};
constexpr OnnxTypeMapping kOnnxTypes[] = {
    {onnx::TensorProto::FLOAT, DType::kFloat32},   {onnx::TensorProto::DOUBLE, DType::kFloat64},
    {onnx::TensorProto::FLOAT16, DType::kFloat16}, {onnx::TensorProto::BFLOAT16, DType::kBFloat16},
    {onnx::TensorProto::INT8, DType::kInt8},       {onnx::TensorProto::INT16, DType::kInt16},
    {onnx::TensorProto::INT32, DType::kInt32},     {onnx::TensorProto::INT64, DType::kInt64},
    {onnx::TensorProto::UINT8, DType::kUInt8},     {onnx::TensorProto::UINT16, DType::kUInt16},
    {onnx::TensorProto::UINT32, DType::kUInt32},   {onnx::TensorProto::UINT64, DType::kUInt64},
    {onnx::TensorProto::BOOL, DType::kBool},       {onnx::TensorProto::STRING, DType::kString},
};

// The typed field the ONNX spec (onnx.proto, TensorProto) stores each element type in.
enum class ValueField { kFloat, kDouble, kInt32, kInt64, kUInt64, kString };

ValueField FieldFor(DType dtype) {
  switch (dtype) {
    case DType::kString:
      return ValueField::kString;
    case DType::kFloat32:
      return ValueField::kFloat;
    case DType::kFloat64:
      return ValueField::kDouble;
    case DType::kInt64:
      return ValueField::kInt64;
    case DType::kUInt32:
    case DType::kUInt64:
      return ValueField::kUInt64;
    default:  // 8- and 16-bit integers, bool, float16 and bfloat16 (bit patterns), int32
      return ValueField::kInt32;
  }
}

std::string_view FieldName(ValueField field) {
  switch (field) {
    case ValueField::kFloat:
      return "float_data";
    case ValueField::kDouble:
      return "double_data";
    case ValueField::kInt32:
      return "int32_data";
    case ValueField::kInt64:
      return "int64_data";
    case ValueField::kUInt64:
      return "uint64_data";
    case ValueField::kString:
      return "string_data";
  }
  return "";
}

// Names of the value fields holding data, in field order, for the one-field rule and messages.
std::vector<std::string_view> PopulatedFields(const onnx::TensorProto& proto) {
  std::vector<std::string_view> fields;
  if (proto.float_data_size() > 0) fields.push_back("float_data");
  if (proto.int32_data_size() > 0) fields.push_back("int32_data");
  if (proto.string_data_size() > 0) fields.push_back("string_data");
  if (proto.int64_data_size() > 0) fields.push_back("int64_data");
  if (proto.has_raw_data()) fields.push_back("raw_data");
  if (proto.double_data_size() > 0) fields.push_back("double_data");
  if (proto.uint64_data_size() > 0) fields.push_back("uint64_data");
  return fields;
}

// Converts each value with static_cast, as ONNX Runtime does (fp16/bf16 keep the low 16 bits of
// the int32, which is where the spec puts their bit patterns).
template <typename Dst, typename Values>
void CopyValues(const Values& values, Tensor& tensor) {
  std::span<Dst> out = tensor.data<Dst>();
  for (int value_idx = 0; value_idx < values.size(); ++value_idx) {
    out[value_idx] = static_cast<Dst>(values.Get(value_idx));
  }
}

void CopyInt32Field(const onnx::TensorProto& proto, Tensor& tensor) {
  switch (DTypeSize(tensor.dtype())) {
    case 1:
      return CopyValues<uint8_t>(proto.int32_data(), tensor);
    case 2:
      return CopyValues<uint16_t>(proto.int32_data(), tensor);
    default:
      return CopyValues<int32_t>(proto.int32_data(), tensor);
  }
}

int FieldSize(const onnx::TensorProto& proto, ValueField field) {
  switch (field) {
    case ValueField::kFloat:
      return proto.float_data_size();
    case ValueField::kDouble:
      return proto.double_data_size();
    case ValueField::kInt32:
      return proto.int32_data_size();
    case ValueField::kInt64:
      return proto.int64_data_size();
    case ValueField::kUInt64:
      return proto.uint64_data_size();
    case ValueField::kString:
      return proto.string_data_size();
  }
  return 0;
}

void FillFromTypedField(const onnx::TensorProto& proto, Tensor& tensor) {
  switch (FieldFor(tensor.dtype())) {
    case ValueField::kFloat:
      return CopyValues<float>(proto.float_data(), tensor);
    case ValueField::kDouble:
      return CopyValues<double>(proto.double_data(), tensor);
    case ValueField::kInt32:
      return CopyInt32Field(proto, tensor);
    case ValueField::kInt64:
      return CopyValues<int64_t>(proto.int64_data(), tensor);
    case ValueField::kUInt64:
      if (tensor.dtype() == DType::kUInt32)
        return CopyValues<uint32_t>(proto.uint64_data(), tensor);
      return CopyValues<uint64_t>(proto.uint64_data(), tensor);
    case ValueField::kString:
      std::copy(proto.string_data().begin(), proto.string_data().end(), tensor.strings().begin());
      return;
  }
}

// Mirrors onnx's checker: exactly one value field unless the tensor has no elements, and that
// field is raw_data or the one the spec assigns to the element type, holding exactly the elements
// the dims call for. Runs before the tensor is allocated, so lying dims cost no memory.
Status CheckData(const onnx::TensorProto& proto, const std::vector<std::string_view>& fields,
                 DType dtype, const Shape& shape) {
  const std::string described = std::string(DTypeName(dtype)) + shape.ToString();
  if (shape.NumElements() == 0) {
    // numpy_helper.from_array writes an empty raw_data for empty arrays; that is not data.
    const bool only_empty_raw =
        fields.size() == 1 && fields[0] == "raw_data" && proto.raw_data().empty();
    if (fields.empty() || only_empty_raw) return Status::OK();
    return Status::DataLoss("is 0-element but contains data in " + std::string(fields[0]));
  }
  if (fields.size() > 1) {
    return Status::DataLoss("holds data in both " + std::string(fields[0]) + " and " +
                            std::string(fields[1]) + "; ONNX allows one value field");
  }
  const size_t elements = static_cast<size_t>(shape.NumElements());
  if (fields[0] == "raw_data" && dtype == DType::kString) {
    // onnx.proto: "When this raw_data field is used to store tensor value, elem_type MUST NOT be
    // STRING"; raw bytes cannot say where one string ends.
    return Status::DataLoss("stores strings in raw_data; ONNX puts them in string_data");
  }
  if (fields[0] == "raw_data") {
    const size_t needed = elements * DTypeSize(dtype);
    if (proto.raw_data().size() == needed) return Status::OK();
    return Status::DataLoss("raw_data holds " + std::to_string(proto.raw_data().size()) +
                            " bytes, " + described + " needs " + std::to_string(needed));
  }
  const ValueField field = FieldFor(dtype);
  if (fields[0] != FieldName(field)) {
    return Status::DataLoss("stores " + std::string(DTypeName(dtype)) + " values in " +
                            std::string(fields[0]) + "; ONNX puts them in " +
                            std::string(FieldName(field)) +
                            (dtype == DType::kString ? "" : " or raw_data"));
  }
  const size_t count = static_cast<size_t>(FieldSize(proto, field));
  if (count == elements) return Status::OK();
  return Status::DataLoss(std::string(FieldName(field)) + " holds " + std::to_string(count) +
                          " values, " + described + " needs " + std::to_string(elements));
}

// Rejects protos that are not plain, in-file tensors of a type convgate holds.
Result<DType> CheckSupported(const onnx::TensorProto& proto) {
  if (proto.data_type() == onnx::TensorProto::UNDEFINED) {
    return Status::Unimplemented(
        "not a tensor (data_type UNDEFINED); sequence, map and optional protos are not supported");
  }
  if (proto.has_segment()) {
    // Also what a SequenceProto or OptionalProto looks like when read as a TensorProto: their
    // field 3 (the contained values) lands in TensorProto.segment.
    return Status::Unimplemented(
        "a segmented tensor, or not a tensor at all (sequence and optional protos read like "
        "this); neither is supported");
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return Status::Unimplemented(
        "stores its data externally (data_location EXTERNAL), which "
        "convgate does not read");
  }
  std::optional<DType> dtype = DTypeFromOnnx(proto.data_type());
  if (!dtype) {
    return Status::Unimplemented("element type " + OnnxElemTypeName(proto.data_type()) +
                                 " is not supported");
  }
  return *dtype;
}

// The bytes the tensor will take: its elements, or for strings the bytes of the strings.
uint64_t TensorBytes(const onnx::TensorProto& proto, DType dtype, const Shape& shape) {
  if (dtype != DType::kString) return static_cast<uint64_t>(shape.NumElements()) * DTypeSize(dtype);
  uint64_t bytes = 0;
  for (const std::string& value : proto.string_data()) bytes += value.size();
  return bytes;
}

// The data was checked against the dims first, so a tensor over the limit is one whose file is
// large or whose varints are short (one byte per int64 element); either way it is refused before
// it is allocated.
Status CheckTensorLimit(const onnx::TensorProto& proto, DType dtype, const Shape& shape,
                        int64_t max_tensor_bytes) {
  const uint64_t bytes = TensorBytes(proto, dtype, shape);
  if (bytes <= static_cast<uint64_t>(std::max<int64_t>(max_tensor_bytes, 0))) {
    return Status::OK();
  }
  return Status::FailedPrecondition(std::string(DTypeName(dtype)) + shape.ToString() + " needs " +
                                    FormatBytes(static_cast<int64_t>(bytes)) +
                                    ", over the limit of " + FormatBytes(max_tensor_bytes) +
                                    " (--max-tensor-bytes)");
}

Result<Tensor> TensorFromProto(const onnx::TensorProto& proto, int64_t max_tensor_bytes) {
  CONVGATE_ASSIGN_OR_RETURN(DType dtype, CheckSupported(proto));
  const std::vector<std::string_view> fields = PopulatedFields(proto);
  Result<Shape> shape = Shape::Make(std::vector<int64_t>(proto.dims().begin(), proto.dims().end()));
  // No writer produces a tensor with elements but no data. An optional or sequence proto parsed
  // as a TensorProto does: its name lands in dims (field 1) and its element type in data_type.
  if (fields.empty() && (!shape.ok() || shape->NumElements() != 0)) {
    return Status::Unimplemented(
        "not a tensor: dims but no data (sequence, map and optional protos read like this)");
  }
  if (!shape.ok()) return Status::DataLoss("bad dims: " + shape.status().message());
  CONVGATE_RETURN_IF_ERROR(CheckData(proto, fields, dtype, *shape));
  CONVGATE_RETURN_IF_ERROR(CheckTensorLimit(proto, dtype, *shape, max_tensor_bytes));
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(dtype, std::move(shape).value()));
  if (tensor.num_elements() == 0) return tensor;
  if (fields[0] == "raw_data") {
    std::memcpy(tensor.bytes().data(), proto.raw_data().data(), tensor.byte_size());
  } else {
    FillFromTypedField(proto, tensor);
  }
  if (dtype == DType::kBool) internal::NormalizeBools(tensor.bytes());
  return tensor;
}

// True when field 1 arrives length-delimited. TensorProto.dims is a proto2 repeated int64 without
// [packed = true], so protobuf writes it as one varint per dim; a length-delimited field 1 is the
// name string of a SequenceProto, OptionalProto or MapProto, which protobuf parses as packed dims.
bool HasLengthDelimitedField1(std::string_view bytes) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  while (const uint32_t tag = input.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == 1 &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      return true;
    }
    if (!WireFormatLite::SkipField(&input, tag)) return false;
  }
  return false;
}

// A proto that fails the tensor checks and has the shape of a container proto (dims from a name
// string, no tensor name, no raw_data: fields 8 and 9 do not exist in those protos) is reported as
// "not a tensor" rather than as a corrupt one. Writers of the proto3 variant of onnx.proto pack
// dims too, which is why this only reinterprets a failure and never rejects a valid tensor.
bool LooksLikeContainerProto(std::string_view bytes, const onnx::TensorProto& proto) {
  return proto.name().empty() && !proto.has_raw_data() && HasLengthDelimitedField1(bytes);
}

// What the tensor's values take in the proto: the raw bytes, or every string plus up to 10 bytes
// of tag and length prefix each (a protobuf varint length of a < 2 GiB string takes at most 5).
size_t PayloadBytes(const Tensor& tensor) {
  if (tensor.dtype() != DType::kString) return tensor.byte_size();
  size_t total = 0;
  for (const std::string& value : tensor.strings()) total += value.size() + 10;
  return total;
}

}  // namespace

std::optional<DType> DTypeFromOnnx(int onnx_elem_type) {
  for (const OnnxTypeMapping& mapping : kOnnxTypes) {
    if (mapping.onnx_type == onnx_elem_type) return mapping.dtype;
  }
  return std::nullopt;
}

int OnnxFromDType(DType dtype) {
  for (const OnnxTypeMapping& mapping : kOnnxTypes) {
    if (mapping.dtype == dtype) return mapping.onnx_type;
  }
  return 0;
}

std::string OnnxElemTypeName(int onnx_elem_type) {
  if (onnx_elem_type >= 0 && static_cast<size_t>(onnx_elem_type) < std::size(kOnnxTypeNames)) {
    return std::string(kOnnxTypeNames[onnx_elem_type]);
  }
  return "type " + std::to_string(onnx_elem_type);
}

Result<NamedTensorProto> ParseTensorProto(std::string_view bytes, std::string_view what,
                                          const Limits& limits) {
  // protobuf parses at most INT_MAX bytes (and refuses messages over 2 GiB when writing them).
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Status::Unimplemented(std::string(what) + ": " + std::to_string(bytes.size()) +
                                 " bytes; protobuf cannot parse a TensorProto over 2 GiB");
  }
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::DataLoss(std::string(what) +
                            ": not a valid TensorProto (protobuf cannot parse " +
                            std::to_string(bytes.size()) + " bytes)");
  }
  const std::string context = std::string(what) + ": tensor " +
                              (proto.name().empty() ? "(no name)" : "'" + proto.name() + "'");
  Result<Tensor> tensor = TensorFromProto(proto, limits.max_tensor_bytes);
  if (!tensor.ok() && tensor.status().code() == StatusCode::kDataLoss &&
      LooksLikeContainerProto(bytes, proto)) {
    return Status::Unimplemented(context +
                                 ": not a tensor: its field 1 is a string, as in a "
                                 "sequence, map or optional proto, which are not supported (" +
                                 tensor.status().message() + ")");
  }
  if (!tensor.ok()) return tensor.status().WithContext(context);
  return NamedTensorProto{proto.name(), std::move(tensor).value()};
}

Result<NamedTensorProto> ReadTensorProto(const std::filesystem::path& path, const Limits& limits) {
  // protobuf parses at most 2 GiB, ReadFile's default limit; the tensor is held to the caller's.
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseTensorProto(bytes, path.string(), limits);
}

std::string SerializeTensorProto(const Tensor& tensor, std::string_view name) {
  onnx::TensorProto proto;
  proto.set_name(std::string(name));
  for (int64_t dim : tensor.shape().dims()) proto.add_dims(dim);
  proto.set_data_type(OnnxFromDType(tensor.dtype()));
  if (tensor.dtype() == DType::kString) {
    for (const std::string& value : tensor.strings()) proto.add_string_data(value);
  } else {
    proto.set_raw_data(tensor.bytes().data(), tensor.byte_size());
  }
  return proto.SerializeAsString();
}

Status WriteTensorProto(const std::filesystem::path& path, const Tensor& tensor,
                        std::string_view name) {
  // Leaves room for the name, dims and field tags below protobuf's 2 GiB message limit.
  constexpr size_t kMaxRawBytes = static_cast<size_t>(INT_MAX) - (size_t{1} << 20);
  if (PayloadBytes(tensor) > kMaxRawBytes) {
    return Status::Unimplemented("cannot write " + path.string() + ": " + tensor.Describe() +
                                 " is over the 2 GiB protobuf limit");
  }
  return WriteFileAtomic(path, SerializeTensorProto(tensor, name));
}

Result<Tensor> ReinterpretAs(Tensor tensor, DType dtype) {
  if (dtype == DType::kString || tensor.dtype() == DType::kString) {
    return Status::InvalidArgument("cannot reinterpret " + tensor.Describe() + " as " +
                                   std::string(DTypeName(dtype)) +
                                   ": strings have no bytes to keep");
  }
  if (DTypeSize(dtype) != DTypeSize(tensor.dtype())) {
    return Status::InvalidArgument("cannot reinterpret " + tensor.Describe() + " as " +
                                   std::string(DTypeName(dtype)) + ": element sizes differ");
  }
  return Tensor::FromBytes(dtype, tensor.shape(), tensor.bytes());
}

}  // namespace convgate::io
