#include "convgate/io/npy.h"

#include <bit>
#include <cstring>
#include <vector>

#include "convgate/core/file_util.h"
#include "io/byte_order.h"
#include "io/py_literal.h"

namespace convgate::io {
namespace {

// Tensor holds native-order bytes; this reader and writer translate to and from little-endian.
static_assert(std::endian::native == std::endian::little, "convgate assumes a little-endian host");

using internal::PyLiteral;

// Format from numpy/lib/format.py: 6 magic bytes, major and minor version, then the header length
// as little-endian uint16 (version 1.0) or uint32 (2.0 and 3.0).
constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kVersionOffset = 6;
constexpr size_t kLengthOffset = 8;
// numpy pads the header so the data starts at a multiple of 64 bytes (format.ARRAY_ALIGN).
constexpr size_t kAlign = 64;

struct NpyDescr {
  DType dtype = DType::kFloat32;
  bool big_endian = false;
};

struct NpyHeader {
  NpyDescr descr;
  bool fortran_order = false;
  Shape shape;
  size_t data_offset = 0;
};

uint32_t LoadLittleEndian(std::string_view bytes, size_t offset, size_t width) {
  uint32_t value = 0;
  for (size_t byte_idx = 0; byte_idx < width; ++byte_idx) {
    value |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[offset + byte_idx]))
             << (8 * byte_idx);
  }
  return value;
}

// The type part of a descr ("f4", "i8", "V2") once the byte-order character is stripped.
std::optional<DType> DTypeFromTypeCode(std::string_view code) {
  static constexpr struct {
    std::string_view code;
    DType dtype;
  } kCodes[] = {
      {"f2", DType::kFloat16},  {"f4", DType::kFloat32}, {"f8", DType::kFloat64},
      {"i1", DType::kInt8},     {"i2", DType::kInt16},   {"i4", DType::kInt32},
      {"i8", DType::kInt64},    {"u1", DType::kUInt8},   {"u2", DType::kUInt16},
      {"u4", DType::kUInt32},   {"u8", DType::kUInt64},  {"b1", DType::kBool},
      {"V2", DType::kBFloat16},
  };
  for (const auto& entry : kCodes) {
    if (entry.code == code) return entry.dtype;
  }
  return std::nullopt;
}

Result<NpyDescr> ParseDescr(const PyLiteral& literal) {
  if (literal.kind == PyLiteral::Kind::kList) {
    // A list of (name, type) pairs is how numpy spells a structured dtype.
    return Status::Unimplemented(
        "structured dtype (descr is a list); convgate reads plain "
        "numeric arrays only");
  }
  if (literal.kind != PyLiteral::Kind::kString) {
    return Status::DataLoss("'descr': expected a string, got " +
                            std::string(internal::PyLiteralKindName(literal.kind)));
  }
  std::string_view code = literal.text;
  NpyDescr descr;
  const char order = code.empty() ? '\0' : code[0];
  if (order == '<' || order == '>' || order == '|' || order == '=') code.remove_prefix(1);
  descr.big_endian = order == '>';
  if (std::optional<DType> dtype = DTypeFromTypeCode(code)) {
    descr.dtype = *dtype;
    // A void has no byte order: numpy reads '>V2' as the same bytes as '|V2', and so do we.
    if (*dtype == DType::kBFloat16) descr.big_endian = false;
    return descr;
  }
  // Types numpy writes that convgate cannot hold: object, unicode, bytes, void of other sizes,
  // complex, datetime, timedelta, long double.
  const bool numpy_kind =
      !code.empty() && std::string_view("OUSaVcMmgG").find(code[0]) != std::string_view::npos;
  if (numpy_kind || code == "f16" || code == "f12") {
    return Status::Unimplemented("dtype '" + literal.text + "' is not supported");
  }
  return Status::DataLoss("bad descr '" + literal.text + "'");
}

Result<Shape> ParseShapeTuple(const PyLiteral& literal) {
  if (literal.kind != PyLiteral::Kind::kTuple) {
    return Status::DataLoss("'shape': expected a tuple, got " +
                            std::string(internal::PyLiteralKindName(literal.kind)));
  }
  std::vector<int64_t> dims;
  for (const PyLiteral& item : literal.items) {
    if (item.kind != PyLiteral::Kind::kInt) {
      return Status::DataLoss("'shape': expected integers, got " +
                              std::string(internal::PyLiteralKindName(item.kind)));
    }
    dims.push_back(item.integer);
  }
  Result<Shape> shape = Shape::Make(std::move(dims));
  if (!shape.ok()) return Status::DataLoss("bad 'shape': " + shape.status().message());
  return shape;
}

Result<NpyHeader> ParseHeaderDict(std::string_view text) {
  CONVGATE_ASSIGN_OR_RETURN(PyLiteral dict, internal::ParsePyLiteral(text));
  if (dict.kind != PyLiteral::Kind::kDict) {
    return Status::DataLoss("expected a dict, got " +
                            std::string(internal::PyLiteralKindName(dict.kind)));
  }
  // numpy rejects headers with missing or extra keys; so do we, to accept exactly what it does.
  for (const std::string& key : dict.keys) {
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      return Status::DataLoss("unexpected header key '" + key + "'");
    }
  }
  const PyLiteral* descr = dict.Find("descr");
  const PyLiteral* fortran_order = dict.Find("fortran_order");
  const PyLiteral* shape = dict.Find("shape");
  if (descr == nullptr || fortran_order == nullptr || shape == nullptr) {
    return Status::DataLoss("lacks one of 'descr', 'fortran_order', 'shape'");
  }
  if (fortran_order->kind != PyLiteral::Kind::kBool) {
    return Status::DataLoss("'fortran_order': expected True or False, got " +
                            std::string(internal::PyLiteralKindName(fortran_order->kind)));
  }
  NpyHeader header;
  CONVGATE_ASSIGN_OR_RETURN(header.descr, ParseDescr(*descr));
  CONVGATE_ASSIGN_OR_RETURN(header.shape, ParseShapeTuple(*shape));
  header.fortran_order = fortran_order->boolean;
  return header;
}

Result<NpyHeader> ParseHeader(std::string_view bytes) {
  if (bytes.size() < kLengthOffset || bytes.substr(0, kMagic.size()) != kMagic) {
    return Status::DataLoss("not a .npy file (bad magic: expected \\x93NUMPY)");
  }
  const int major = static_cast<uint8_t>(bytes[kVersionOffset]);
  const int minor = static_cast<uint8_t>(bytes[kVersionOffset + 1]);
  if (major < 1 || major > 3 || minor != 0) {
    return Status::Unimplemented("format version " + std::to_string(major) + "." +
                                 std::to_string(minor) + " (convgate reads 1.0, 2.0 and 3.0)");
  }
  const size_t length_width = major == 1 ? 2 : 4;
  const size_t header_offset = kLengthOffset + length_width;
  if (bytes.size() < header_offset) return Status::DataLoss("truncated header length");
  const size_t header_length = LoadLittleEndian(bytes, kLengthOffset, length_width);
  if (bytes.size() - header_offset < header_length) {
    return Status::DataLoss("truncated header: it declares " + std::to_string(header_length) +
                            " bytes, the file has " + std::to_string(bytes.size() - header_offset));
  }
  // Versions 1.0 and 2.0 use latin1 and 3.0 utf8; the keys and values convgate accepts are ASCII
  // either way, so the bytes are parsed as they are.
  Result<NpyHeader> header = ParseHeaderDict(bytes.substr(header_offset, header_length));
  if (!header.ok()) return header.status().WithContext("header");
  header->data_offset = header_offset + header_length;
  return header;
}

// Fortran order stores the first axis fastest. Walks the destination in C order with an odometer
// over the index, moving the source offset by the Fortran stride of whichever axis ticks.
// REQUIRES: shape.NumElements() > 0.
void CopyFortranToC(const std::byte* src, std::byte* dst, const Shape& shape, size_t elem_size) {
  const size_t rank = shape.rank();
  std::vector<int64_t> fortran_stride(rank);
  int64_t stride = 1;
  for (size_t axis = 0; axis < rank; ++axis) {
    fortran_stride[axis] = stride;
    stride *= shape.dim(axis);
  }
  std::vector<int64_t> index(rank, 0);
  int64_t src_offset = 0;
  for (int64_t flat = 0; flat < shape.NumElements(); ++flat) {
    std::memcpy(dst + flat * elem_size, src + src_offset * elem_size, elem_size);
    for (size_t axis = rank; axis-- > 0;) {
      if (++index[axis] < shape.dim(axis)) {
        src_offset += fortran_stride[axis];
        break;
      }
      src_offset -= fortran_stride[axis] * (shape.dim(axis) - 1);
      index[axis] = 0;
    }
  }
}

std::string_view NpyDescrOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kFloat16:
      return "<f2";
    case DType::kBFloat16:
      return "<V2";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kUInt8:
      return "|u1";
    case DType::kUInt16:
      return "<u2";
    case DType::kUInt32:
      return "<u4";
    case DType::kUInt64:
      return "<u8";
    case DType::kBool:
      return "|b1";
  }
  return "";
}

// Python's repr of the shape tuple: "()", "(3,)", "(2, 3)".
std::string ShapeRepr(const Shape& shape) {
  std::string text = "(";
  for (size_t axis = 0; axis < shape.rank(); ++axis) {
    if (axis > 0) text += ", ";
    text += std::to_string(shape.dim(axis));
  }
  return text + (shape.rank() == 1 ? ",)" : ")");
}

}  // namespace

Result<Tensor> ParseNpy(std::string_view bytes, std::string_view what) {
  Result<NpyHeader> header = ParseHeader(bytes);
  if (!header.ok()) return header.status().WithContext(what);
  const NpyDescr& descr = header->descr;
  const size_t elem_size = DTypeSize(descr.dtype);
  // Shape caps the element count at 2^60, so the byte count fits.
  const size_t needed = static_cast<size_t>(header->shape.NumElements()) * elem_size;
  const size_t available = bytes.size() - header->data_offset;
  if (available != needed) {
    // Trailing bytes are rejected although numpy ignores them: they mean the header and the
    // writer disagree about the array, and a checker must not guess which one is right.
    return Status::DataLoss(std::string(what) + ": " + std::string(DTypeName(descr.dtype)) +
                            header->shape.ToString() + " needs " + std::to_string(needed) +
                            " data bytes, the file has " + std::to_string(available) +
                            (available < needed ? " (truncated)" : " (trailing bytes)"));
  }
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(descr.dtype, header->shape));
  const std::byte* src = reinterpret_cast<const std::byte*>(bytes.data() + header->data_offset);
  if (header->fortran_order && tensor.num_elements() > 0) {
    CopyFortranToC(src, tensor.bytes().data(), tensor.shape(), elem_size);
  } else if (needed > 0) {
    std::memcpy(tensor.bytes().data(), src, needed);
  }
  if (descr.big_endian) internal::SwapElementBytes(tensor.bytes(), elem_size);
  if (descr.dtype == DType::kBool) internal::NormalizeBools(tensor.bytes());
  return tensor;
}

Result<Tensor> ReadNpy(const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseNpy(bytes, path.string());
}

std::string SerializeNpyHeader(DType dtype, const Shape& shape) {
  std::string dict = "{'descr': '" + std::string(NpyDescrOf(dtype)) +
                     "', 'fortran_order': False, 'shape': " + ShapeRepr(shape) + ", }";
  // Header = dict, space padding, '\n', sized so the data starts on a kAlign boundary; a header
  // too long for the uint16 length of version 1.0 moves to version 2.0 (as numpy does).
  size_t prelude = kLengthOffset + 2;
  size_t padded = (prelude + dict.size() + 1 + kAlign - 1) / kAlign * kAlign - prelude;
  const bool version2 = padded > 0xFFFF;
  if (version2) {
    prelude = kLengthOffset + 4;
    padded = (prelude + dict.size() + 1 + kAlign - 1) / kAlign * kAlign - prelude;
  }
  std::string out(kMagic);
  out.push_back(version2 ? '\x02' : '\x01');
  out.push_back('\0');
  for (size_t byte_idx = 0; byte_idx < (version2 ? 4u : 2u); ++byte_idx) {
    out.push_back(static_cast<char>((padded >> (8 * byte_idx)) & 0xFF));
  }
  out += dict;
  out.append(padded - dict.size() - 1, ' ');
  out.push_back('\n');
  return out;
}

std::string SerializeNpy(const Tensor& tensor) {
  std::string out = SerializeNpyHeader(tensor.dtype(), tensor.shape());
  out.append(reinterpret_cast<const char*>(tensor.bytes().data()), tensor.byte_size());
  return out;
}

Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor) {
  return WriteFileAtomic(path, SerializeNpy(tensor));
}

}  // namespace convgate::io
