#include "convgate/graph/internal/model_proto.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "convgate/core/file_util.h"

namespace convgate::graph {
namespace {

// ModelProto's top-level fields (onnx.proto3) by number; "" for numbers it does not define.
std::string ModelFieldName(uint64_t number) {
  static const std::map<uint64_t, std::string> kFields = {
      {1, "ir_version"},     {2, "producer_name"}, {3, "producer_version"},
      {4, "domain"},         {5, "model_version"}, {6, "doc_string"},
      {7, "graph"},          {8, "opset_import"},  {14, "metadata_props"},
      {20, "training_info"}, {25, "functions"},    {26, "configuration"}};
  auto found = kFields.find(number);
  return found == kFields.end() ? "" : found->second;
}

// Reads a base-128 varint at `pos`; nullopt when the bytes end inside it or it is over 10 bytes.
std::optional<uint64_t> ReadVarint(std::string_view bytes, size_t& pos) {
  uint64_t value = 0;
  for (int shift = 0; shift < 70 && pos < bytes.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(bytes[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return std::nullopt;
}

// The first bytes as hex and printable text, to show what a foreign file starts with.
std::string FirstBytes(std::string_view bytes) {
  const std::string_view head = bytes.substr(0, 8);
  std::string hex, text;
  for (char c : head) {
    char buffer[4];
    std::snprintf(buffer, sizeof(buffer), "%02x ", static_cast<unsigned char>(c));
    hex += buffer;
    text += (c >= 0x20 && c < 0x7f) ? c : '.';
  }
  return hex + "'" + text + "'";
}

// Why protobuf rejected `bytes` (or found no graph in them), from a walk over ModelProto's
// top-level fields: a field running past the end of the file means it was cut short; a first field
// ModelProto does not define means it is some other kind of file.
std::string Diagnose(std::string_view bytes) {
  if (bytes.empty()) return "the file is empty";
  if (bytes.starts_with("PK\x03\x04")) {
    return "it is a zip archive, not an ONNX model (TorchScript and PyTorch checkpoints are zips: "
           "`convgate inspect` tells which)";
  }
  size_t pos = 0;
  std::string last_field;
  while (pos < bytes.size()) {
    const size_t start = pos;
    const std::optional<uint64_t> tag = ReadVarint(bytes, pos);
    const uint64_t number = tag ? *tag >> 3 : 0;
    const uint64_t wire_type = tag ? *tag & 7 : 0;
    const std::string name = ModelFieldName(number);
    const bool known_wire = wire_type == 0 || wire_type == 1 || wire_type == 2 || wire_type == 5;
    if (!tag || number == 0 || !known_wire || (start == 0 && name.empty())) {
      if (start == 0) {
        return "it does not start like an ONNX model (first bytes " + FirstBytes(bytes) + ")";
      }
      return "its bytes stop making sense at byte " + std::to_string(start) + ", after the " +
             last_field + " field (the file is corrupt)";
    }
    const std::string field = name.empty() ? "field " + std::to_string(number) : name;
    uint64_t length = 0;
    if (wire_type == 0) {
      if (!ReadVarint(bytes, pos)) {
        return "the file is truncated: it ends inside the " + field + " field";
      }
      length = 0;
    } else if (wire_type == 2) {
      const std::optional<uint64_t> declared = ReadVarint(bytes, pos);
      if (!declared) return "the file is truncated: it ends inside the " + field + " field";
      length = *declared;
    } else {
      length = wire_type == 1 ? 8 : 4;
    }
    if (length > bytes.size() - pos) {
      return "the file is truncated: its " + field + " field (at byte " + std::to_string(start) +
             ") needs " + std::to_string(length) + " bytes but only " +
             std::to_string(bytes.size() - pos) + " remain";
    }
    pos += length;
    last_field = field;
  }
  return "its top-level fields are whole, but one of them (the graph, most likely) is corrupt";
}

}  // namespace

Result<onnx::ModelProto> ParseModelProto(std::string_view bytes,
                                         const std::filesystem::path& path) {
  // Protobuf's parser takes an int length and refuses messages of 2 GB or more, so a model that
  // big must keep its weights in external data files (which ONNX exporters do above 2 GB).
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Status::Unimplemented(path.string() + ": " + std::to_string(bytes.size()) +
                                 " bytes exceed protobuf's 2 GB limit; save the model with its "
                                 "weights as external data");
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::DataLoss(path.string() + ": not a valid ONNX model: " + Diagnose(bytes));
  }
  // Protobuf accepts some non-ONNX bytes (and an empty file) as a message with unknown fields or
  // none at all, so a graph is what tells a model apart.
  if (!model.has_graph()) {
    const std::string why = Diagnose(bytes);
    return Status::DataLoss(path.string() + ": not a valid ONNX model: " +
                            (why.starts_with("its top-level fields are whole")
                                 ? "it has no graph (the file is truncated or not ONNX)"
                                 : why));
  }
  return model;
}

Result<onnx::ModelProto> ParseModelProtoFile(const std::filesystem::path& path, int64_t* size) {
  CONVGATE_RETURN_IF_ERROR(CheckRegularFile(path));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kUnavailable,
                  "cannot open " + path.string() + ": " + std::strerror(err));
  }
  struct stat info {};
  const bool sized = ::fstat(fd, &info) == 0;
  *size = sized ? static_cast<int64_t>(info.st_size) : 0;
  onnx::ModelProto model;
  bool parsed = false;
  if (sized && info.st_size <= INT_MAX) {
    google::protobuf::io::FileInputStream stream(fd, 1 << 20);
    parsed = model.ParseFromZeroCopyStream(&stream) && model.has_graph();
  }
  ::close(fd);
  if (parsed) return model;
  // The failure, the 2 GB limit and the diagnosis are ParseModelProto's; they need the bytes.
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  *size = static_cast<int64_t>(bytes.size());
  return ParseModelProto(bytes, path);
}

namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

// Field numbers in onnx.proto3.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
// TensorProto's data: float_data, int32_data, string_data, int64_data, raw_data, double_data,
// uint64_data.
bool IsTensorData(uint32_t field) {
  return field == 4 || field == 5 || field == 6 || field == 7 || field == 9 || field == 10 ||
         field == 11;
}

// What to do with one length-delimited field of a message: keep its bytes, drop them, or filter
// them as a sub-message (then `filter` is called with its bytes' stream and writes the result).
enum class FieldAction { kKeep, kDrop, kFilter };

// Copies the fields of the message in `in` (up to its current limit) to `out` in wire format,
// asking `action(field, length)` for length-delimited fields and telling `dropped(tag, offset,
// length)` where each dropped one lies in the stream. False when the input is malformed.
template <typename Action, typename Dropped, typename Filter>
bool CopyFields(CodedInputStream& in, std::string& out, Action action, Dropped dropped,
                Filter filter) {
  StringOutputStream out_stream(&out);
  CodedOutputStream coded(&out_stream);
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.ConsumedEntireMessage() || in.BytesUntilLimit() == 0;
    const uint32_t field = tag >> 3;
    const uint32_t wire_type = tag & 7;
    uint64_t varint = 0;
    uint32_t fixed32 = 0;
    uint64_t fixed64 = 0;
    switch (wire_type) {
      case 0:
        if (!in.ReadVarint64(&varint)) return false;
        coded.WriteTag(tag);
        coded.WriteVarint64(varint);
        break;
      case 1:
        if (!in.ReadLittleEndian64(&fixed64)) return false;
        coded.WriteTag(tag);
        coded.WriteLittleEndian64(fixed64);
        break;
      case 5:
        if (!in.ReadLittleEndian32(&fixed32)) return false;
        coded.WriteTag(tag);
        coded.WriteLittleEndian32(fixed32);
        break;
      case 2: {
        uint32_t length = 0;
        if (!in.ReadVarint32(&length)) return false;
        const FieldAction what = action(field, length);
        if (what == FieldAction::kDrop) {
          dropped(tag, in.CurrentPosition(), length);
          if (!in.Skip(static_cast<int>(length))) return false;
          break;
        }
        std::string bytes;
        if (what == FieldAction::kKeep) {
          if (!in.ReadString(&bytes, static_cast<int>(length))) return false;
        } else {
          const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
          if (!filter(field, in, bytes) || in.BytesUntilLimit() != 0) return false;
          in.PopLimit(limit);
        }
        coded.WriteTag(tag);
        coded.WriteVarint32(static_cast<uint32_t>(bytes.size()));
        coded.WriteString(bytes);
        break;
      }
      default:
        return false;  // groups are not in onnx.proto
    }
  }
}

// Initializers up to this size are kept whole: shape inference reads the values of the small
// tensors that shape other values (Reshape's shape, Slice's starts, Resize's scales), never of
// weights. A larger one loses all its data fields, never some: a repeated field (string_data, a
// packed field written in several pieces) read back in part would come back out of order.
constexpr uint32_t kKeptDataBytes = 1024;

auto NoFilter = [](uint32_t, CodedInputStream&, std::string&) { return false; };
auto NoRecord = [](uint32_t, int, uint32_t) {};

bool CopyTensorWithoutData(CodedInputStream& in, std::string& out,
                           std::vector<SkippedTensorData>& skipped) {
  const bool drop_data = in.BytesUntilLimit() > static_cast<int>(kKeptDataBytes);
  return CopyFields(
      in, out,
      [drop_data](uint32_t field, uint32_t) {
        return drop_data && IsTensorData(field) ? FieldAction::kDrop : FieldAction::kKeep;
      },
      [&skipped](uint32_t tag, int offset, uint32_t length) {
        skipped.push_back({tag, offset, length});
      },
      NoFilter);
}

bool CopyGraphWithoutData(CodedInputStream& in, std::string& out,
                          std::vector<std::vector<SkippedTensorData>>& skipped) {
  return CopyFields(
      in, out,
      [](uint32_t field, uint32_t) {
        return field == kGraphInitializer ? FieldAction::kFilter : FieldAction::kKeep;
      },
      NoRecord,
      [&skipped](uint32_t, CodedInputStream& sub, std::string& bytes) {
        skipped.emplace_back();
        return CopyTensorWithoutData(sub, bytes, skipped.back());
      });
}

// A model's graph fields merge when parsed, their initializers in file order; `skipped` follows
// that order across them.
bool CopyModelWithoutData(CodedInputStream& in, std::string& out,
                          std::vector<std::vector<SkippedTensorData>>& skipped) {
  return CopyFields(
      in, out,
      [](uint32_t field, uint32_t) {
        return field == kModelGraph ? FieldAction::kFilter : FieldAction::kKeep;
      },
      NoRecord,
      [&skipped](uint32_t, CodedInputStream& sub, std::string& bytes) {
        return CopyGraphWithoutData(sub, bytes, skipped);
      });
}

}  // namespace

Result<ModelStructure> ReadModelStructure(const std::filesystem::path& path) {
  CONVGATE_RETURN_IF_ERROR(CheckRegularFile(path));
  ModelStructure structure;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  const bool sized = fd >= 0 && ::fstat(fd, &info) == 0 && info.st_size <= INT_MAX;
  std::string filtered;
  bool copied = false;
  if (sized) {
    google::protobuf::io::FileInputStream stream(fd, 1 << 20);
    CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(INT_MAX);
    copied = CopyModelWithoutData(coded, filtered, structure.skipped);
  }
  if (fd >= 0) ::close(fd);
  if (copied && structure.model.ParseFromString(filtered) && structure.model.has_graph() &&
      structure.skipped.size() == static_cast<size_t>(structure.model.graph().initializer_size())) {
    structure.file_size = static_cast<int64_t>(info.st_size);
    return structure;
  }
  // A file the filter cannot follow is parsed whole, with ParseModelProtoFile's errors.
  structure.skipped.clear();
  CONVGATE_ASSIGN_OR_RETURN(structure.model, ParseModelProtoFile(path, &structure.file_size));
  return structure;
}

Result<onnx::ModelProto> ParseModelStructureFile(const std::filesystem::path& path, int64_t* size) {
  CONVGATE_ASSIGN_OR_RETURN(ModelStructure structure, ReadModelStructure(path));
  *size = structure.file_size;
  return std::move(structure.model);
}

Status RestoreTensorData(const std::filesystem::path& path,
                         const std::vector<SkippedTensorData>& skipped, onnx::TensorProto& tensor) {
  if (skipped.empty()) return Status::OK();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Unavailable(path.string() + ": " + std::strerror(errno));
  std::string wire;
  bool complete = true;
  for (const SkippedTensorData& field : skipped) {
    // The field as it was in the file (tag, length, payload): merged into the tensor, a repeated
    // field appends and raw_data is set, exactly as parsing the whole file does.
    wire.clear();
    StringOutputStream out_stream(&wire);
    {
      CodedOutputStream coded(&out_stream);
      coded.WriteTag(field.tag);
      coded.WriteVarint32(field.length);
    }
    const size_t header = wire.size();
    wire.resize(header + field.length);
    const ssize_t got = ::pread(fd, wire.data() + header, field.length, field.offset);
    if (got != static_cast<ssize_t>(field.length) || !tensor.MergeFromString(wire)) {
      complete = false;
      break;
    }
  }
  ::close(fd);
  if (complete) return Status::OK();
  return Status::DataLoss(path.string() + ": initializer '" + tensor.name() +
                          "' cannot be read back (the file changed while it was in use?)");
}

namespace {

// Whether a skipped field's payload is the tensor's elements as little-endian bytes, which is what
// external data holds: raw_data always; float_data and double_data when packed (one
// length-delimited field) and of the type they store.
bool IsRawPayload(const SkippedTensorData& field, int32_t data_type) {
  constexpr uint32_t kFloatData = 4, kDoubleData = 10, kRawData = 9;
  const uint32_t number = field.tag >> 3;
  if (number == kRawData) return true;
  if (number == kFloatData) {
    return data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::COMPLEX64;
  }
  if (number == kDoubleData) {
    return data_type == onnx::TensorProto::DOUBLE || data_type == onnx::TensorProto::COMPLEX128;
  }
  return false;
}

}  // namespace

Status ReferenceTensorData(const std::filesystem::path& path, const std::string& location,
                           const std::vector<SkippedTensorData>& skipped,
                           onnx::TensorProto& tensor) {
  if (skipped.empty()) return Status::OK();
  if (skipped.size() != 1 || !IsRawPayload(skipped.front(), tensor.data_type())) {
    return RestoreTensorData(path, skipped, tensor);
  }
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&tensor](const std::string& key, const std::string& value) {
    onnx::StringStringEntryProto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(skipped.front().offset));
  add("length", std::to_string(skipped.front().length));
  return Status::OK();
}

}  // namespace convgate::graph
