// Parsing ModelProtos from bytes with the errors convgate reports. Internal: shared by graph and
// convert (which rewrites models), not part of the library's API.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::graph {

// Parses `bytes` as a ModelProto that has a graph. Errors name `path`: DataLoss when protobuf
// rejects the bytes or there is no graph, Unimplemented above protobuf's 2 GB limit.
Result<onnx::ModelProto> ParseModelProto(std::string_view bytes, const std::filesystem::path& path);

// The same, read from the file at `path` as it parses, so the model is held once (as the message)
// rather than twice (file bytes and message): 47 MB less at the peak for resnet18. When parsing
// fails the file is read whole and the error is ParseModelProto's, with its diagnosis. `size` is
// set to the file's size in bytes.
Result<onnx::ModelProto> ParseModelProtoFile(const std::filesystem::path& path, int64_t* size);

// ParseModelProtoFile without the tensor data of the main graph's initializers (the raw_data and
// typed data fields of every initializer over 1 KiB are skipped as the file is read, everything
// else is kept): for a
// backend that needs the model's structure (signature, external data files, shape inference) but
// will read the weights itself, so that knowing the structure does not take a copy of them (46 MB
// for resnet18). A file the filter cannot follow is parsed whole by ParseModelProtoFile, with its
// errors.
Result<onnx::ModelProto> ParseModelStructureFile(const std::filesystem::path& path, int64_t* size);

// Where one initializer data field that ReadModelStructure skipped lies in the file.
struct SkippedTensorData {
  uint32_t tag = 0;     // the field's wire tag (its number and wire type)
  int64_t offset = 0;   // of its payload, from the start of the file
  uint32_t length = 0;  // of its payload
};

struct ModelStructure {
  onnx::ModelProto model;
  int64_t file_size = 0;
  // skipped[k]: the data fields of model.graph().initializer(k) left in the file. Empty when the
  // model was parsed whole (the filter could not follow it).
  std::vector<std::vector<SkippedTensorData>> skipped;
};

// ParseModelStructureFile, saying where the skipped data lies, so that a caller needing a few
// initializers' values (a node cut out of the graph) reads those and not every weight.
Result<ModelStructure> ReadModelStructure(const std::filesystem::path& path);

// Reads the fields `skipped` from the file at `path` and merges them into `tensor`, the
// initializer they were skipped from: it then holds what parsing the whole file gives. DataLoss
// naming the file and the initializer when they cannot be read back (the file changed).
Status RestoreTensorData(const std::filesystem::path& path,
                         const std::vector<SkippedTensorData>& skipped, onnx::TensorProto& tensor);

// Points `tensor` (an initializer whose data ReadModelStructure skipped) at that data where it lies
// in the model file, as ONNX external data in the file `location` (a name relative to the folder
// the rewritten model is loaded from, for the same file: a hard link). Data stored as raw bytes
// (raw_data, packed float_data or double_data of their own types) is referenced; data in other
// encodings (varints, strings) is read back into the tensor (RestoreTensorData). A runtime then
// reads the weights from the file once, and nothing copies them into a model first.
Status ReferenceTensorData(const std::filesystem::path& path, const std::string& location,
                           const std::vector<SkippedTensorData>& skipped,
                           onnx::TensorProto& tensor);

// WithOutputs (onnx_model.h) on a parsed model: adds the outputs in place; true when it added
// any.
Result<bool> AddOutputs(onnx::ModelProto& model, const std::vector<std::string>& output_names,
                        const std::filesystem::path& model_path_for_messages);

}  // namespace convgate::graph
