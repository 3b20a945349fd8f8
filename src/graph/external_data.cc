#include "convgate/graph/internal/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "convgate/core/numbers.h"
#include "convgate/core/scoped_fd.h"
#include "graph/onnx_types.h"

namespace convgate::graph {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kAlignment = 4096;
// Tensors smaller than this are packed without padding: a page each would grow a model of many
// small tensors for no gain.
constexpr int64_t kAlignAbove = int64_t{64} << 10;
constexpr size_t kCopyChunk = size_t{4} << 20;

struct Span {
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
};

// "initializer 'w'", the way every error names a tensor.
std::string Named(const onnx::TensorProto& tensor) {
  return "tensor '" + (tensor.name().empty() ? std::string("(unnamed)") : tensor.name()) + "'";
}

Result<int64_t> ParseOffset(const std::string& text, const std::string& key,
                            const onnx::TensorProto& tensor) {
  Result<int64_t> value = ParseInteger(text, 0, INT64_MAX);
  if (!value.ok()) {
    return Status::DataLoss(Named(tensor) + ": external data " + key + " '" + text +
                            "' is not a non-negative integer");
  }
  return *value;
}

Result<Span> SpanOf(const onnx::TensorProto& tensor) {
  Span span;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      span.location = entry.value();
    } else if (entry.key() == "offset") {
      CONVGATE_ASSIGN_OR_RETURN(span.offset, ParseOffset(entry.value(), "offset", tensor));
    } else if (entry.key() == "length") {
      CONVGATE_ASSIGN_OR_RETURN(span.length, ParseOffset(entry.value(), "length", tensor));
    }
  }
  if (span.location.empty()) {
    return Status::DataLoss(Named(tensor) + " is stored as external data but names no location");
  }
  return span;
}

// The bytes the tensor's dtype and dims take; nullopt for strings and types of unknown size.
std::optional<int64_t> ExpectedBytes(const onnx::TensorProto& tensor) {
  const int bits = OnnxElemTypeBits(tensor.data_type());
  if (bits == 0) return std::nullopt;
  int64_t elements = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0 || (dim > 0 && elements > INT64_MAX / dim)) return std::nullopt;
    elements *= dim;
  }
  if (elements > INT64_MAX / bits) return std::nullopt;
  return (elements * bits + 7) / 8;
}

Status SetLocation(onnx::TensorProto& tensor, const std::string& location) {
  for (onnx::StringStringEntryProto& entry : *tensor.mutable_external_data()) {
    if (entry.key() == "location") {
      entry.set_value(location);
      return Status::OK();
    }
  }
  return Status::Internal(Named(tensor) + ": no location to set");
}

Result<std::pair<fs::path, int64_t>> CheckedFile(const fs::path& model_path,
                                                 const std::string& location) {
  bool escapes = fs::path(location).is_absolute();
  for (const fs::path& part : fs::path(location)) escapes = escapes || part == "..";
  if (escapes) {
    return Status::DataLoss("external data location '" + location +
                            "' is not a file in the model's folder (absolute, or through '..')");
  }
  std::error_code ignored;  // a relative model path resolves against the working folder
  const fs::path file =
      (fs::absolute(model_path, ignored).parent_path() / location).lexically_normal();
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) {
    const int error = errno;
    return Status::DataLoss(
        "external data file " + file.string() +
        (error == ENOENT ? " does not exist" : ": " + std::string(std::strerror(error))));
  }
  if (!S_ISREG(info.st_mode)) {
    return Status::DataLoss("external data " + file.string() + " is not a regular file");
  }
  return std::make_pair(file, static_cast<int64_t>(info.st_size));
}

Status Anchor(onnx::TensorProto& tensor, const fs::path& model_path) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return Status::OK();
  CONVGATE_ASSIGN_OR_RETURN(Span span, SpanOf(tensor));
  Result<std::pair<fs::path, int64_t>> checked = CheckedFile(model_path, span.location);
  if (!checked.ok()) return checked.status().WithContext(Named(tensor));
  const auto& [file, size] = *checked;
  const int64_t length = span.length.value_or(size - std::min(size, span.offset));
  if (span.offset > size || length > size - span.offset) {
    return Status::DataLoss(Named(tensor) + ": its external data (offset " +
                            std::to_string(span.offset) + ", " + std::to_string(length) +
                            " bytes) runs past the end of " + file.string() + " (" +
                            std::to_string(size) + " bytes): truncated or the wrong file");
  }
  if (std::optional<int64_t> expected = ExpectedBytes(tensor); expected && *expected != length) {
    return Status::DataLoss(Named(tensor) + ": its external data in " + file.string() + " is " +
                            std::to_string(length) + " bytes, its dtype and dims need " +
                            std::to_string(*expected));
  }
  return SetLocation(tensor, file.string());
}

// Reads [offset, offset + length) of `path` in chunks, handing each to `sink`.
Status ReadRange(const std::string& path, int64_t offset, int64_t length,
                 const std::function<Status(std::string_view)>& sink) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return Status::Unavailable("cannot open " + path + ": " + std::strerror(errno));
  }
  std::vector<char> buffer(static_cast<size_t>(std::min<int64_t>(length, kCopyChunk)));
  while (length > 0) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(length, buffer.size()));
    const ssize_t got = ::pread(fd.get(), buffer.data(), want, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return Status::DataLoss("cannot read " + path + " at offset " + std::to_string(offset) +
                              (got < 0 ? std::string(": ") + std::strerror(errno)
                                       : std::string(": the file ends early")));
    }
    CONVGATE_RETURN_IF_ERROR(sink(std::string_view(buffer.data(), static_cast<size_t>(got))));
    offset += got;
    length -= got;
  }
  return Status::OK();
}

Result<std::pair<Span, int64_t>> AnchoredSpan(const onnx::TensorProto& tensor) {
  CONVGATE_ASSIGN_OR_RETURN(Span span, SpanOf(tensor));
  if (!fs::path(span.location).is_absolute()) {
    return Status::Internal(Named(tensor) + ": external data read before AnchorExternalData");
  }
  int64_t length = 0;
  if (span.length) {
    length = *span.length;
  } else {
    std::error_code error;
    const uintmax_t size = fs::file_size(span.location, error);
    if (error) return Status::DataLoss("cannot read " + span.location + ": " + error.message());
    length = static_cast<int64_t>(size) - span.offset;
  }
  return std::make_pair(std::move(span), length);
}

}  // namespace

Status ForEachTensor(onnx::GraphProto& graph, const std::function<Status(onnx::TensorProto&)>& fn) {
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) {
    CONVGATE_RETURN_IF_ERROR(fn(tensor));
  }
  for (onnx::SparseTensorProto& sparse : *graph.mutable_sparse_initializer()) {
    CONVGATE_RETURN_IF_ERROR(fn(*sparse.mutable_values()));
    CONVGATE_RETURN_IF_ERROR(fn(*sparse.mutable_indices()));
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) CONVGATE_RETURN_IF_ERROR(fn(*attribute.mutable_t()));
      for (onnx::TensorProto& tensor : *attribute.mutable_tensors()) {
        CONVGATE_RETURN_IF_ERROR(fn(tensor));
      }
      if (attribute.has_g()) CONVGATE_RETURN_IF_ERROR(ForEachTensor(*attribute.mutable_g(), fn));
      for (onnx::GraphProto& subgraph : *attribute.mutable_graphs()) {
        CONVGATE_RETURN_IF_ERROR(ForEachTensor(subgraph, fn));
      }
    }
  }
  return Status::OK();
}

Result<fs::path> ExternalDataFile(const fs::path& model_path, const std::string& location) {
  CONVGATE_ASSIGN_OR_RETURN(auto checked, CheckedFile(model_path, location));
  return checked.first;
}

bool HasExternalTensors(const onnx::ModelProto& model) {
  bool found = false;
  // ForEachTensor visits mutable tensors; this walk changes none.
  onnx::GraphProto& graph = const_cast<onnx::GraphProto&>(model.graph());
  (void)ForEachTensor(graph, [&](onnx::TensorProto& tensor) {
    found = found || tensor.data_location() == onnx::TensorProto::EXTERNAL;
    return Status::OK();
  });
  return found;
}

std::vector<std::string> ExternalDataLocations(const onnx::ModelProto& model) {
  std::set<std::string> locations;
  onnx::GraphProto& graph = const_cast<onnx::GraphProto&>(model.graph());
  (void)ForEachTensor(graph, [&](onnx::TensorProto& tensor) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return Status::OK();
    for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
      if (entry.key() == "location") locations.insert(entry.value());
    }
    return Status::OK();
  });
  return {locations.begin(), locations.end()};
}

Status AnchorExternalData(onnx::ModelProto& model, const fs::path& model_path) {
  Status anchored = ForEachTensor(*model.mutable_graph(), [&](onnx::TensorProto& tensor) {
    return Anchor(tensor, model_path);
  });
  if (!anchored.ok()) return anchored.WithContext(model_path.string());
  return Status::OK();
}

Result<int64_t> ExternalLength(const onnx::TensorProto& tensor) {
  CONVGATE_ASSIGN_OR_RETURN(auto span, AnchoredSpan(tensor));
  return span.second;
}

Status ReadExternalInto(const onnx::TensorProto& tensor, char* dst) {
  CONVGATE_ASSIGN_OR_RETURN(auto span, AnchoredSpan(tensor));
  return ReadRange(span.first.location, span.first.offset, span.second,
                   [&](std::string_view chunk) {
                     std::memcpy(dst, chunk.data(), chunk.size());
                     dst += chunk.size();
                     return Status::OK();
                   });
}

Result<std::string> ReadExternalBytes(const onnx::TensorProto& tensor) {
  CONVGATE_ASSIGN_OR_RETURN(int64_t length, ExternalLength(tensor));
  std::string bytes(static_cast<size_t>(length), '\0');
  CONVGATE_RETURN_IF_ERROR(ReadExternalInto(tensor, bytes.data()));
  return bytes;
}

Status LoadExternalData(onnx::TensorProto& tensor) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return Status::OK();
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadExternalBytes(tensor));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  tensor.set_raw_data(std::move(bytes));
  return Status::OK();
}

Result<ExternalDataWriter> ExternalDataWriter::Create(const fs::path& data_path) {
  CONVGATE_ASSIGN_OR_RETURN(PendingFile file, PendingFile::Create(data_path));
  return ExternalDataWriter(std::move(file));
}

Status ExternalDataWriter::Pad(int64_t length) {
  if (length < kAlignAbove) return Status::OK();
  const int64_t padding = (kAlignment - offset_ % kAlignment) % kAlignment;
  if (padding == 0) return Status::OK();
  CONVGATE_RETURN_IF_ERROR(file_.Write(std::string(static_cast<size_t>(padding), '\0')));
  offset_ += padding;
  return Status::OK();
}

Status ExternalDataWriter::Refer(onnx::TensorProto& tensor, int64_t offset, int64_t length) {
  tensor.clear_external_data();
  // clear_raw_data() keeps the string's capacity: a converted weight would stay allocated.
  std::string().swap(*tensor.mutable_raw_data());
  tensor.clear_raw_data();
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"location", file_.target().filename().string()},
        {"offset", std::to_string(offset)},
        {"length", std::to_string(length)}}) {
    onnx::StringStringEntryProto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  return Status::OK();
}

Status ExternalDataWriter::Place(onnx::TensorProto& tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    CONVGATE_ASSIGN_OR_RETURN(auto span, AnchoredSpan(tensor));
    CONVGATE_RETURN_IF_ERROR(Pad(span.second));
    const int64_t start = offset_;
    CONVGATE_RETURN_IF_ERROR(
        ReadRange(span.first.location, span.first.offset, span.second, [&](std::string_view chunk) {
          offset_ += static_cast<int64_t>(chunk.size());
          return file_.Write(chunk);
        }));
    return Refer(tensor, start, span.second);
  }
  if (!tensor.has_raw_data()) return Status::OK();
  const int64_t length = static_cast<int64_t>(tensor.raw_data().size());
  CONVGATE_RETURN_IF_ERROR(Pad(length));
  const int64_t start = offset_;
  CONVGATE_RETURN_IF_ERROR(file_.Write(tensor.raw_data()));
  offset_ += length;
  return Refer(tensor, start, length);
}

bool ExternalDataWriter::Holds(const onnx::TensorProto& tensor) const {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return false;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") return entry.value() == file_.target().filename().string();
  }
  return false;
}

Status ExternalDataWriter::Commit() { return file_.Commit(); }

fs::path DataFileBeside(const fs::path& out) {
  fs::path data = out;
  data += ".data";
  return data;
}

Status PlaceExternalData(onnx::ModelProto& model, ExternalDataWriter& writer,
                         int64_t inline_limit) {
  return ForEachTensor(*model.mutable_graph(), [&](onnx::TensorProto& tensor) {
    const bool large =
        tensor.has_raw_data() && static_cast<int64_t>(tensor.raw_data().size()) > inline_limit;
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL && !large) return Status::OK();
    if (writer.Holds(tensor)) return Status::OK();  // placed during the rewrite
    return writer.Place(tensor);
  });
}

Status WriteModelWithExternalData(onnx::ModelProto& model, const fs::path& out,
                                  const fs::path& data_path, int64_t inline_limit) {
  CONVGATE_ASSIGN_OR_RETURN(ExternalDataWriter writer, ExternalDataWriter::Create(data_path));
  CONVGATE_RETURN_IF_ERROR(PlaceExternalData(model, writer, inline_limit));
  CONVGATE_RETURN_IF_ERROR(writer.Commit());
  return WriteFileAtomic(out, model.SerializeAsString());
}

}  // namespace convgate::graph
