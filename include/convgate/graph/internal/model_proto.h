// Parsing ModelProtos from bytes with the errors convgate reports. Internal: shared by graph and
// convert (which rewrites models), not part of the library's API.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string_view>

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

// ParseModelProtoFile without the tensor data of the main graph's initializers (raw_data and the
// typed data fields are skipped as the file is read, everything else is kept): for a backend that
// needs the model's structure (signature, external data files) but will read the weights itself,
// so that knowing the structure does not take a copy of them (46 MB for resnet18). A file the
// filter cannot follow is parsed whole by ParseModelProtoFile, with its errors.
Result<onnx::ModelProto> ParseModelStructureFile(const std::filesystem::path& path, int64_t* size);

}  // namespace convgate::graph
