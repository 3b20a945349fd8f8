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

}  // namespace convgate::graph
