// Reading and editing ONNX ModelProtos with libonnx (protobuf types never appear in this header).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"

namespace convgate::graph {

struct OpsetImport {
  std::string domain;  // "" is the default ONNX domain ("ai.onnx")
  int64_t version = 0;
};

struct ModelSummary {
  std::filesystem::path path;
  std::string format = "onnx";
  std::string sha256;
  int64_t file_bytes = 0;
  int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  Signature signature;  // graph inputs that are not initializers, and graph outputs
  // Op type ("Conv", or "com.microsoft.FusedConv" for other domains) -> node count, including
  // nodes inside subgraphs (If/Loop/Scan bodies).
  std::map<std::string, int64_t> op_histogram;
  int64_t node_count = 0;  // including subgraph nodes
  int64_t initializer_count = 0;
  int64_t parameter_count = 0;    // elements over all initializers
  int64_t initializer_bytes = 0;  // bytes those elements take (raw or typed storage)
  bool has_external_data = false;
};

// Parses and summarises an ONNX model file. A file that is not a parseable ModelProto (truncated,
// not ONNX) is DataLoss naming the file; a model without a graph is DataLoss too.
Result<ModelSummary> SummarizeOnnxModel(const std::filesystem::path& path);

// Serialized copy of the model whose graph outputs are `output_names` (existing outputs first,
// in their order, then the requested extra value names). Types of new outputs come from the
// model's value_info or ONNX shape inference; a name no node produces is NotFound naming it.
Result<std::string> WithOutputs(const std::string& model_bytes,
                                const std::vector<std::string>& output_names,
                                const std::filesystem::path& model_path_for_messages);

// Every value name produced by a node of the main graph, in topological (node) order.
Result<std::vector<std::string>> IntermediateNames(const std::string& model_bytes);

}  // namespace convgate::graph
