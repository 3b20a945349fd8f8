#include "convgate/io/npy.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/core/units.h"
#include "io/byte_order.h"
#include "io/npy_reader.h"
#include "io/npy_strings.h"
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
  // kString only: numpy's 'U' (UTF-32) or 'S' (bytes) layout and its width in characters.
  internal::NpyStringKind string_kind = internal::NpyStringKind::kUnicode;
  size_t string_width = 0;

  size_t ElementBytes() const {
    if (dtype != DType::kString) return DTypeSize(dtype);
    return internal::NpyStringElementBytes(string_kind, string_width);
  }
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

// 'U<n>' or 'S<n>' (the byte-order character already stripped); nullopt for other codes.
std::optional<Result<NpyDescr>> ParseStringDescr(std::string_view code, const std::string& text) {
  if (code.empty() || (code[0] != 'U' && code[0] != 'S')) return std::nullopt;
  const std::string_view digits = code.substr(1);
  size_t width = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), width);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return std::nullopt;  // 'U' alone, 'Ux': not a numpy dtype, reported below
  }
  // numpy never writes width 0 (np.array(['']) is '<U1'); refusing it also means every element
  // costs file bytes, so a tiny file cannot demand billions of strings.
  if (width == 0 || width > internal::kMaxNpyStringWidth) {
    return Result<NpyDescr>(Status::DataLoss("string dtype '" + text + "' has width " +
                                             std::string(digits) + " (numpy writes 1 to 2^32)"));
  }
  NpyDescr descr;
  descr.dtype = DType::kString;
  descr.string_kind =
      code[0] == 'U' ? internal::NpyStringKind::kUnicode : internal::NpyStringKind::kBytes;
  descr.string_width = width;
  return Result<NpyDescr>(std::move(descr));
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
  if (std::optional<Result<NpyDescr>> strings = ParseStringDescr(code, literal.text)) {
    if (strings->ok()) (*strings)->big_endian = descr.big_endian;
    return std::move(*strings);
  }
  if (std::optional<DType> dtype = DTypeFromTypeCode(code)) {
    descr.dtype = *dtype;
    // A void has no byte order: numpy reads '>V2' as the same bytes as '|V2', and so do we.
    if (*dtype == DType::kBFloat16) descr.big_endian = false;
    return descr;
  }
  // Types numpy writes that convgate cannot hold: object, old-style bytes ('a'), void of other
  // sizes, complex, datetime, timedelta, long double.
  const bool numpy_kind =
      !code.empty() && std::string_view("OaVcMmgG").find(code[0]) != std::string_view::npos;
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

// Reads the header from `source` (the first bytes of a file of `total_bytes`), checking every
// length against what the file can hold before anything is allocated for it.
Result<NpyHeader> ReadHeader(const internal::NpyByteSource& source, uint64_t total_bytes) {
  if (total_bytes < kLengthOffset) {
    return Status::DataLoss("not a .npy file (bad magic: expected \\x93NUMPY)");
  }
  std::string prelude(kLengthOffset, '\0');
  CONVGATE_RETURN_IF_ERROR(source(std::as_writable_bytes(std::span(prelude))));
  if (prelude.substr(0, kMagic.size()) != kMagic) {
    return Status::DataLoss("not a .npy file (bad magic: expected \\x93NUMPY)");
  }
  const int major = static_cast<uint8_t>(prelude[kVersionOffset]);
  const int minor = static_cast<uint8_t>(prelude[kVersionOffset + 1]);
  if (major < 1 || major > 3 || minor != 0) {
    return Status::Unimplemented("format version " + std::to_string(major) + "." +
                                 std::to_string(minor) + " (convgate reads 1.0, 2.0 and 3.0)");
  }
  const size_t length_width = major == 1 ? 2 : 4;
  const size_t header_offset = kLengthOffset + length_width;
  if (total_bytes < header_offset) return Status::DataLoss("truncated header length");
  std::string length_bytes(length_width, '\0');
  CONVGATE_RETURN_IF_ERROR(source(std::as_writable_bytes(std::span(length_bytes))));
  const size_t header_length = LoadLittleEndian(length_bytes, 0, length_width);
  if (total_bytes - header_offset < header_length) {
    return Status::DataLoss("truncated header: it declares " + std::to_string(header_length) +
                            " bytes, the file has " + std::to_string(total_bytes - header_offset));
  }
  if (header_length > internal::kMaxNpyHeaderBytes) {
    return Status::DataLoss("a header of " + std::to_string(header_length) +
                            " bytes (numpy refuses more than 10000 by default; convgate reads up "
                            "to " +
                            std::to_string(internal::kMaxNpyHeaderBytes) + ")");
  }
  std::string text(header_length, '\0');
  CONVGATE_RETURN_IF_ERROR(source(std::as_writable_bytes(std::span(text))));
  // Versions 1.0 and 2.0 use latin1 and 3.0 utf8; the keys and values convgate accepts are ASCII
  // either way, so the bytes are parsed as they are.
  Result<NpyHeader> header = ParseHeaderDict(text);
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
    case DType::kString:
      break;  // the width depends on the strings: see SerializeNpyParts
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

// String elements are fixed-width in the file, so Fortran order is undone on the raw bytes before
// they are decoded. REQUIRES: data holds exactly the elements the header calls for.
Result<Tensor> ParseStringData(std::string_view data, const NpyHeader& header,
                               std::string_view what) {
  const NpyDescr& descr = header.descr;
  std::string c_order;
  if (header.fortran_order && header.shape.NumElements() > 0) {
    c_order.resize(data.size());
    CopyFortranToC(reinterpret_cast<const std::byte*>(data.data()),
                   reinterpret_cast<std::byte*>(c_order.data()), header.shape,
                   descr.ElementBytes());
    data = c_order;
  }
  Result<Tensor> tensor = internal::DecodeNpyStrings(data, header.shape, descr.string_kind,
                                                     descr.string_width, descr.big_endian);
  if (!tensor.ok()) return tensor.status().WithContext(what);
  return tensor;
}

// Magic, version, header length and the padded header dict for `descr`.
std::string HeaderFor(std::string_view descr, const Shape& shape) {
  std::string dict = "{'descr': '" + std::string(descr) +
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

// Native byte order, and bools that are 0 or 1.
Tensor FinishNumeric(Tensor tensor, const NpyDescr& descr) {
  if (descr.big_endian) internal::SwapElementBytes(tensor.bytes(), descr.ElementBytes());
  if (descr.dtype == DType::kBool) internal::NormalizeBools(tensor.bytes());
  return tensor;
}

// "float32[2, 3]" for messages.
std::string Describe(const NpyHeader& header) {
  return std::string(DTypeName(header.descr.dtype)) + header.shape.ToString();
}

// The bytes the data of `header` takes in the file.
Result<size_t> DataBytes(const NpyHeader& header, std::string_view what) {
  const size_t elem_size = header.descr.ElementBytes();
  // Shape caps the element count at 2^60 and ParseStringDescr the string width at 2^32, but
  // together they can exceed size_t.
  size_t needed = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(header.shape.NumElements()), elem_size, &needed)) {
    return Status::DataLoss(std::string(what) + ": " + Describe(header) + " of " +
                            std::to_string(elem_size) +
                            "-byte elements needs more than 2^64 bytes");
  }
  return needed;
}

// A buffer for data that must be rearranged or decoded before it is a tensor.
Result<std::unique_ptr<std::byte[]>> AllocateBuffer(size_t bytes, std::string_view what) {
  std::unique_ptr<std::byte[]> buffer(new (std::nothrow) std::byte[bytes == 0 ? 1 : bytes]);
  if (!buffer) {
    return Status::Unavailable(std::string(what) + ": cannot allocate " +
                               FormatBytes(static_cast<int64_t>(bytes)) + " to read its data");
  }
  return buffer;
}

// Reads `needed` data bytes from `source` into the tensor: straight into its buffer for C-order
// numeric data (no second copy), through a buffer for Fortran order and strings. C-order numeric
// data that is `mapped` is not read at all: the tensor adopts it where it lies.
Result<Tensor> ReadData(const internal::NpyByteSource& source, const NpyHeader& header,
                        size_t needed, std::string_view what, const internal::MappedNpy* mapped) {
  const NpyDescr& descr = header.descr;
  const bool rearranged = header.fortran_order && header.shape.NumElements() > 0;
  if (mapped != nullptr && descr.dtype != DType::kString && !rearranged) {
    CONVGATE_ASSIGN_OR_RETURN(
        Tensor tensor,
        Tensor::Adopt(descr.dtype, header.shape, mapped->bytes.subspan(header.data_offset, needed),
                      mapped->owner));
    return FinishNumeric(std::move(tensor), descr);  // writes copy only the pages they touch
  }
  if (descr.dtype == DType::kString || rearranged) {
    CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<std::byte[]> data, AllocateBuffer(needed, what));
    CONVGATE_RETURN_IF_ERROR(source(std::span(data.get(), needed)));
    if (descr.dtype == DType::kString) {
      return ParseStringData(std::string_view(reinterpret_cast<const char*>(data.get()), needed),
                             header, what);
    }
    CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(descr.dtype, header.shape));
    CopyFortranToC(data.get(), tensor.bytes().data(), tensor.shape(), descr.ElementBytes());
    return FinishNumeric(std::move(tensor), descr);
  }
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(descr.dtype, header.shape));
  CONVGATE_RETURN_IF_ERROR(source(tensor.bytes()));
  return FinishNumeric(std::move(tensor), descr);
}

// A source over bytes in memory. ReadHeader and ReadNpyFrom check every length against the total
// before reading, so it never runs out; the check stays for the header's own reads.
internal::NpyByteSource MemorySource(std::span<const std::byte> bytes, size_t& offset) {
  return [bytes, &offset](std::span<std::byte> dst) -> Status {
    if (bytes.size() - offset < dst.size()) return Status::DataLoss("truncated");
    std::memcpy(dst.data(), bytes.data() + offset, dst.size());
    offset += dst.size();
    return Status::OK();
  };
}

}  // namespace

namespace internal {

Result<Tensor> ReadNpyFrom(const NpyByteSource& source, uint64_t total_bytes,
                           int64_t max_tensor_bytes, std::string_view what,
                           const MappedNpy* mapped) {
  Result<NpyHeader> header = ReadHeader(source, total_bytes);
  if (!header.ok()) return header.status().WithContext(what);
  CONVGATE_ASSIGN_OR_RETURN(const size_t needed, DataBytes(*header, what));
  if (needed > static_cast<uint64_t>(std::max<int64_t>(max_tensor_bytes, 0))) {
    return Status::FailedPrecondition(std::string(what) + ": " + Describe(*header) + " needs " +
                                      FormatBytes(static_cast<int64_t>(needed)) +
                                      ", over the limit of " + FormatBytes(max_tensor_bytes) +
                                      " (--max-tensor-bytes)");
  }
  const uint64_t available = total_bytes - header->data_offset;
  if (available != needed) {
    // Trailing bytes are rejected although numpy ignores them: they mean the header and the
    // writer disagree about the array, and a checker must not guess which one is right.
    return Status::DataLoss(std::string(what) + ": " + Describe(*header) + " needs " +
                            std::to_string(needed) + " data bytes, the file has " +
                            std::to_string(available) +
                            (available < needed ? " (truncated)" : " (trailing bytes)"));
  }
  return ReadData(source, *header, needed, what, mapped);
}

Result<Tensor> ReadMappedNpy(const MappedNpy& mapped, int64_t max_tensor_bytes,
                             std::string_view what) {
  size_t offset = 0;
  return ReadNpyFrom(MemorySource(mapped.bytes, offset), mapped.bytes.size(), max_tensor_bytes,
                     what, &mapped);
}

}  // namespace internal

Result<Tensor> ParseNpy(std::string_view bytes, std::string_view what) {
  size_t offset = 0;
  // The bytes are already in memory; a tensor as large as they are costs no more.
  return internal::ReadNpyFrom(MemorySource(std::as_bytes(std::span(bytes)), offset), bytes.size(),
                               std::numeric_limits<int64_t>::max(), what);
}

Result<Tensor> ReadNpy(const std::filesystem::path& path, const Limits& limits) {
  // No size limit on the file itself: the header's declared size is checked against the limit
  // and against the file's size before any data is read.
  CONVGATE_ASSIGN_OR_RETURN(InputFile file,
                            InputFile::Open(path, std::numeric_limits<uint64_t>::max(), ""));
  // Mapped, so the data is compared where the page cache holds it: no read, no copy.
  CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> map, file.Map());
  return internal::ReadMappedNpy({map->bytes(), map}, limits.max_tensor_bytes, path.string());
}

std::string SerializeNpyHeader(DType dtype, const Shape& shape) {
  return HeaderFor(NpyDescrOf(dtype), shape);
}

Result<NpyParts> SerializeNpyParts(const Tensor& tensor) {
  NpyParts parts;
  if (tensor.dtype() != DType::kString) {
    parts.header = SerializeNpyHeader(tensor.dtype(), tensor.shape());
    return parts;
  }
  CONVGATE_ASSIGN_OR_RETURN(internal::EncodedNpyStrings encoded,
                            internal::EncodeNpyUnicode(tensor));
  parts.header = HeaderFor("<U" + std::to_string(encoded.width), tensor.shape());
  parts.string_data = std::move(encoded.data);
  return parts;
}

Result<std::string> SerializeNpy(const Tensor& tensor) {
  CONVGATE_ASSIGN_OR_RETURN(NpyParts parts, SerializeNpyParts(tensor));
  std::string out = std::move(parts.header);
  if (tensor.dtype() == DType::kString) {
    out += parts.string_data;
  } else {
    out.append(reinterpret_cast<const char*>(tensor.bytes().data()), tensor.byte_size());
  }
  return out;
}

Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor) {
  Result<std::string> bytes = SerializeNpy(tensor);
  if (!bytes.ok()) return bytes.status().WithContext("cannot write " + path.string());
  return WriteFileAtomic(path, *bytes);
}

}  // namespace convgate::io
