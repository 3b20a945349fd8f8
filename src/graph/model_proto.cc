#include "graph/model_proto.h"

#include <climits>
#include <string>

namespace convgate::graph {

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
    return Status::DataLoss(path.string() +
                            ": not a valid ONNX model (protobuf parse failed; the file may be "
                            "truncated)");
  }
  // Protobuf accepts some non-ONNX bytes (and an empty file) as a message with unknown fields or
  // none at all, so a graph is what tells a model apart.
  if (!model.has_graph()) {
    return Status::DataLoss(path.string() +
                            ": not a valid ONNX model (it has no graph; the file may be truncated "
                            "or not ONNX)");
  }
  return model;
}

}  // namespace convgate::graph
