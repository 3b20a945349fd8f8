#include "convgate/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/core/units.h"
#include "convgate/core/utf8.h"

namespace convgate::io {
namespace {

using nlohmann::json;

// safetensors' MAX_HEADER_SIZE: a header larger than this is refused by the library too.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct SafetensorsDType {
  const char* name;
  DType dtype;
};
constexpr SafetensorsDType kDTypes[] = {
    {"F64", DType::kFloat64},   {"F32", DType::kFloat32}, {"F16", DType::kFloat16},
    {"BF16", DType::kBFloat16}, {"I64", DType::kInt64},   {"I32", DType::kInt32},
    {"I16", DType::kInt16},     {"I8", DType::kInt8},     {"U64", DType::kUInt64},
    {"U32", DType::kUInt32},    {"U16", DType::kUInt16},  {"U8", DType::kUInt8},
    {"BOOL", DType::kBool},
};

std::optional<DType> DTypeOf(const std::string& name) {
  for (const SafetensorsDType& entry : kDTypes) {
    if (name == entry.name) return entry.dtype;
  }
  return std::nullopt;
}

const char* NameOf(DType dtype) {
  for (const SafetensorsDType& entry : kDTypes) {
    if (entry.dtype == dtype) return entry.name;
  }
  return nullptr;
}

// One header entry, checked.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

Result<uint64_t> NonNegative(const json& value, const std::string& what) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0) {
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    return Status::DataLoss(what + ": " + value.dump() + " is not a non-negative integer");
  }
  return static_cast<uint64_t>(value.get<int64_t>());
}

Result<Shape> ReadShape(const json& shape, const std::string& what) {
  if (!shape.is_array()) return Status::DataLoss(what + ": 'shape' is not a list");
  std::vector<int64_t> dims;
  for (const json& dim : shape) {
    CONVGATE_ASSIGN_OR_RETURN(uint64_t value, NonNegative(dim, what + " shape"));
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::DataLoss(what + ": dimension " + dim.dump() + " overflows");
    }
    dims.push_back(static_cast<int64_t>(value));
  }
  Result<Shape> made = Shape::Make(std::move(dims));
  if (!made.ok()) return Status::DataLoss(what + ": " + made.status().message());
  return made;
}

Result<Entry> ReadEntry(const std::string& name, const json& info, const std::string& what) {
  const std::string tensor = what + ": tensor '" + name + "'";
  if (!info.is_object() || info.size() != 3 || !info.contains("dtype") || !info.contains("shape") ||
      !info.contains("data_offsets")) {
    return Status::DataLoss(tensor + ": expected exactly dtype, shape and data_offsets");
  }
  const json& dtype = info["dtype"];
  if (!dtype.is_string()) return Status::DataLoss(tensor + ": 'dtype' is not a string");
  std::optional<DType> parsed = DTypeOf(dtype.get<std::string>());
  if (!parsed) {
    return Status::Unimplemented(tensor + ": dtype " + dtype.get<std::string>() +
                                 " is not supported (F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 "
                                 "U8 BOOL are)");
  }
  Entry entry{.name = name, .dtype = *parsed};
  CONVGATE_ASSIGN_OR_RETURN(entry.shape, ReadShape(info["shape"], tensor));
  const json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    return Status::DataLoss(tensor + ": 'data_offsets' is not [begin, end]");
  }
  CONVGATE_ASSIGN_OR_RETURN(entry.begin, NonNegative(offsets[0], tensor + " data_offsets"));
  CONVGATE_ASSIGN_OR_RETURN(entry.end, NonNegative(offsets[1], tensor + " data_offsets"));
  if (entry.begin > entry.end) {
    return Status::DataLoss(tensor + ": data_offsets " + offsets.dump() + " end before they begin");
  }
  // NumElements <= 2^62 (Shape::Make) and sizes <= 8, so the product fits in 2^65: check first.
  const uint64_t elements = static_cast<uint64_t>(entry.shape.NumElements());
  const uint64_t size = DTypeSize(entry.dtype);
  if (elements > std::numeric_limits<uint64_t>::max() / size ||
      elements * size != entry.end - entry.begin) {
    return Status::DataLoss(tensor + ": " + dtype.get<std::string>() + entry.shape.ToString() +
                            " needs " + std::to_string(elements) + " x " + std::to_string(size) +
                            " bytes, data_offsets " + offsets.dump() + " hold " +
                            std::to_string(entry.end - entry.begin));
  }
  return entry;
}

Result<std::map<std::string, std::string>> ReadMetadata(const json& metadata,
                                                        const std::string& what) {
  if (!metadata.is_object()) return Status::DataLoss(what + ": __metadata__ is not an object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : metadata.items()) {
    if (!value.is_string()) {
      return Status::DataLoss(what + ": __metadata__ '" + key + "' is not a string");
    }
    out[key] = value.get<std::string>();
  }
  return out;
}

// Every byte of the buffer belongs to exactly one tensor, in order: the format's rule, which also
// makes each tensor's bytes its own.
Status CheckCoverage(std::vector<Entry>& entries, uint64_t buffer_bytes, const std::string& what) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  for (const Entry& entry : entries) {
    if (entry.begin != expected) {
      return Status::DataLoss(what + ": tensor '" + entry.name + "' begins at byte " +
                              std::to_string(entry.begin) + " of the data, expected " +
                              std::to_string(expected) +
                              (entry.begin < expected ? " (overlap)" : " (a hole)"));
    }
    expected = entry.end;
  }
  if (expected != buffer_bytes) {
    // Truncated: name the first tensor cut short, as the npz reader names its member.
    std::string cut;
    for (const Entry& entry : entries) {
      if (entry.end > buffer_bytes) {
        cut = " (truncated: tensor '" + entry.name + "' is cut short)";
        break;
      }
    }
    return Status::DataLoss(what + ": the tensors cover " + std::to_string(expected) +
                            " bytes of data, the file holds " + std::to_string(buffer_bytes) +
                            (expected > buffer_bytes ? cut : " (trailing bytes)"));
  }
  return Status::OK();
}

Result<Tensor> MakeTensor(const Entry& entry, std::string_view buffer) {
  const auto* data = reinterpret_cast<const std::byte*>(buffer.data() + entry.begin);
  CONVGATE_ASSIGN_OR_RETURN(
      Tensor tensor, Tensor::FromBytes(entry.dtype, entry.shape,
                                       {data, static_cast<size_t>(entry.end - entry.begin)}));
  if (entry.dtype == DType::kBool) {
    for (std::byte& byte : tensor.bytes()) {
      if (byte != std::byte{0}) byte = std::byte{1};
    }
  }
  return tensor;
}

Result<json> ReadHeader(std::string_view bytes, const std::string& what, uint64_t& data_start) {
  if (bytes.size() < 8) {
    return Status::DataLoss(what + ": " + std::to_string(bytes.size()) +
                            " bytes, shorter than the 8-byte header length of a safetensors file");
  }
  uint64_t header_bytes = 0;
  for (int byte_idx = 7; byte_idx >= 0; --byte_idx) {
    header_bytes = (header_bytes << 8) | static_cast<unsigned char>(bytes[byte_idx]);
  }
  if (header_bytes > kMaxHeaderBytes || header_bytes > bytes.size() - 8) {
    return Status::DataLoss(what + ": a header of " + std::to_string(header_bytes) +
                            " bytes in a file of " + std::to_string(bytes.size()) +
                            (header_bytes > kMaxHeaderBytes ? " (over safetensors' 100 MB)" : ""));
  }
  const std::string_view text = bytes.substr(8, header_bytes);
  json header = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (text.empty() || text.front() != '{' || !header.is_object()) {
    return Status::DataLoss(what + ": the header is not a JSON object");
  }
  data_start = 8 + header_bytes;
  return header;
}

}  // namespace

Result<SafetensorsFile> ParseSafetensors(std::string_view bytes, std::string_view what_view,
                                         const Limits& limits) {
  const std::string what(what_view);
  uint64_t data_start = 0;
  CONVGATE_ASSIGN_OR_RETURN(json header, ReadHeader(bytes, what, data_start));
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      CONVGATE_ASSIGN_OR_RETURN(file.metadata, ReadMetadata(info, what));
      continue;
    }
    CONVGATE_ASSIGN_OR_RETURN(Entry entry, ReadEntry(name, info, what));
    const uint64_t size = entry.end - entry.begin;
    if (size > static_cast<uint64_t>(std::max<int64_t>(limits.max_tensor_bytes, 0))) {
      return Status::FailedPrecondition(
          what + ": tensor '" + name + "' needs " + FormatBytes(static_cast<int64_t>(size)) +
          ", over the limit of " + FormatBytes(limits.max_tensor_bytes) + " (--max-tensor-bytes)");
    }
    entries.push_back(std::move(entry));
  }
  const std::string_view buffer = bytes.substr(data_start);
  CONVGATE_RETURN_IF_ERROR(CheckCoverage(entries, buffer.size(), what));
  for (const Entry& entry : entries) {
    CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, MakeTensor(entry, buffer));
    // The names are the keys of one JSON object, so unique: no search per tensor (linear, not
    // quadratic, in 100k tensors).
    file.tensors.Append(entry.name, std::move(tensor));
  }
  return file;
}

Result<SafetensorsFile> ReadSafetensors(const std::filesystem::path& path, const Limits& limits) {
  // No limit on the file: each tensor's declared size is checked against the limit first.
  CONVGATE_ASSIGN_OR_RETURN(InputFile file,
                            InputFile::Open(path, std::numeric_limits<uint64_t>::max(), ""));
  CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> map, file.Map());
  const std::span<std::byte> bytes = map->bytes();
  return ParseSafetensors({reinterpret_cast<const char*>(bytes.data()), bytes.size()},
                          path.string(), limits);
}

Result<std::string> SerializeSafetensors(const TensorMap& tensors,
                                         const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorMap::Entry& entry : tensors) {
    // The header is JSON, which holds only UTF-8: a name of other bytes has no spelling in it
    // (safetensors' own readers would reject an escaped one as another name).
    if (FindInvalidUtf8(entry.name).has_value()) {
      return Status::InvalidArgument("tensor '" + EscapeForDisplay(entry.name) +
                                     "': safetensors names are UTF-8, this one is not");
    }
    const char* dtype = NameOf(entry.tensor.dtype());
    if (dtype == nullptr) {
      return Status::InvalidArgument("tensor '" + entry.name + "': safetensors has no " +
                                     std::string(DTypeName(entry.tensor.dtype())) + " type");
    }
    header[entry.name] = {{"dtype", dtype},
                          {"shape", entry.tensor.shape().dims()},
                          {"data_offsets", {offset, offset + entry.tensor.byte_size()}}};
    offset += entry.tensor.byte_size();
  }
  // Metadata is text convgate writes; should a byte of it not be UTF-8, it becomes U+FFFD rather
  // than an exception.
  std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
  text.append((8 - text.size() % 8) % 8, ' ');  // save_file pads so the data is 8-byte aligned
  std::string out(8, '\0');
  for (int byte_idx = 0; byte_idx < 8; ++byte_idx) {
    out[byte_idx] =
        static_cast<char>((static_cast<uint64_t>(text.size()) >> (8 * byte_idx)) & 0xff);
  }
  out += text;
  for (const TensorMap::Entry& entry : tensors) {
    const std::span<const std::byte> data = entry.tensor.bytes();
    out.append(reinterpret_cast<const char*>(data.data()), data.size());
  }
  return out;
}

Status WriteSafetensors(const std::filesystem::path& path, const TensorMap& tensors,
                        const std::map<std::string, std::string>& metadata) {
  Result<std::string> bytes = SerializeSafetensors(tensors, metadata);
  if (!bytes.ok()) return bytes.status().WithContext(path.string());
  return WriteFileAtomic(path, *bytes);
}

}  // namespace convgate::io
