// ONNX tensors whose data lives in a file beside the model (the external data format: keys
// "location", "offset" and "length" in TensorProto.external_data), read and written one tensor at
// a time, so a rewrite of a model over protobuf's 2 GB limit holds the graph and the tensor it is
// on, never the model. Internal: shared by convert (fp16, opset) and transform.
//
// The rewrite sequence: AnchorExternalData (every location made absolute, checked to lie in the
// model's folder and inside its file), the rewrite (which may read a tensor with
// ReadExternalBytes or LoadExternalData, and stream tensors it is done with through an
// ExternalDataWriter), then PlaceExternalData and the model written beside its data file. An
// anchored model is never written as it is: its locations are this machine's paths.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/core/status.h"

namespace convgate::graph {

// Calls `fn` on every tensor of `graph`: initializers, sparse initializers' values and indices,
// and tensor attributes of every node, in every subgraph. Stops at the first error.
Status ForEachTensor(onnx::GraphProto& graph, const std::function<Status(onnx::TensorProto&)>& fn);

// True when some tensor of the model keeps its data in an external file.
bool HasExternalTensors(const onnx::ModelProto& model);

// The external data locations the model's tensors name, sorted, each once (as written: relative
// to the model's folder, unchecked).
std::vector<std::string> ExternalDataLocations(const onnx::ModelProto& model);

// The file an external data `location` of the model at `model_path` names, once checked to be a
// regular file in the model's folder (relative, no ".."): DataLoss naming it otherwise. What a
// hostile model names (/dev/zero, ../../etc/shadow) is never read.
Result<std::filesystem::path> ExternalDataFile(const std::filesystem::path& model_path,
                                               const std::string& location);

// Makes every external location of `model` absolute against `model_dir` (the folder of the
// model's file), after checking it: relative, inside that folder (no ".."), a file that holds
// [offset, offset + length), and a length that fits the tensor's dtype and dims. DataLoss naming
// `model_path`, the tensor and the file otherwise.
Status AnchorExternalData(onnx::ModelProto& model, const std::filesystem::path& model_path);

// The bytes of an anchored external tensor, read from its file.
Result<std::string> ReadExternalBytes(const onnx::TensorProto& tensor);

// The length in bytes of an anchored external tensor's data.
Result<int64_t> ExternalLength(const onnx::TensorProto& tensor);

// Reads an anchored external tensor's data into `dst`, which holds ExternalLength bytes: for a
// reader that wants the values in a buffer of its own type without a second copy.
Status ReadExternalInto(const onnx::TensorProto& tensor, char* dst);

// Makes an anchored external tensor an inline one (its bytes in raw_data); nothing for a tensor
// that is inline already.
Status LoadExternalData(onnx::TensorProto& tensor);

// One data file written tensor by tensor, each of 64 KiB or more at an offset aligned to 4 KiB
// (ONNX Runtime maps aligned tensors instead of copying them). Written through a PendingFile:
// nothing is at `data_path` until Commit.
class ExternalDataWriter {
 public:
  static Result<ExternalDataWriter> Create(const std::filesystem::path& data_path);

  // Moves `tensor`'s data into the file: an anchored external tensor is copied from its file in
  // 4 MiB chunks, an inline one's raw_data written and released. The tensor then refers to the
  // file by its name (the model is written beside it). A tensor with typed data fields instead of
  // raw_data is left inline.
  Status Place(onnx::TensorProto& tensor);

  // Whether `tensor` refers to this file (placed here already).
  bool Holds(const onnx::TensorProto& tensor) const;

  Status Commit();
  int64_t bytes() const { return offset_; }

 private:
  explicit ExternalDataWriter(PendingFile file) : file_(std::move(file)) {}
  Status Pad(int64_t length);
  Status Refer(onnx::TensorProto& tensor, int64_t offset, int64_t length);

  PendingFile file_;
  int64_t offset_ = 0;
};

// Where a rewritten model `out` keeps its external data: "<out's file name>.data" beside it.
std::filesystem::path DataFileBeside(const std::filesystem::path& out);

// Places every anchored external tensor of `model`, and every inline tensor whose raw_data is
// larger than `inline_limit` bytes, into `writer`.
Status PlaceExternalData(onnx::ModelProto& model, ExternalDataWriter& writer,
                         int64_t inline_limit = 1024);

// Writes `model` to `out` with its data in `data_path` (PlaceExternalData, the data file
// committed first, then the model).
Status WriteModelWithExternalData(onnx::ModelProto& model, const std::filesystem::path& out,
                                  const std::filesystem::path& data_path,
                                  int64_t inline_limit = 1024);

}  // namespace convgate::graph
