// Reading and editing ONNX ModelProtos with libonnx (protobuf types never appear in this header).
//
// All functions are pure (no global state) and safe to call from several threads at once.
// Protobuf cannot parse or serialize a message over 2 GB, so models larger than that must keep
// their weights as external data; such an oversized file is reported as Unimplemented, not
// DataLoss.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
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
  std::string sha256;  // empty when summarised from bytes (SummarizeOnnxModelBytes)
  int64_t file_bytes = 0;
  int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  Signature signature;  // graph inputs that are not initializers, and graph outputs
  // Op type ("Conv", or "com.microsoft.FusedConv" for other domains) -> node count, including
  // nodes inside subgraphs (If/Loop/Scan bodies). Bodies of model-local functions are definitions,
  // not nodes, and are not counted.
  std::map<std::string, int64_t> op_histogram;
  int64_t node_count = 0;  // including subgraph nodes
  // Weights live in initializers and in Constant nodes (paddle2onnx and other exporters store every
  // weight in a Constant node); the counts below include both, in subgraphs (If/Loop/Scan bodies)
  // too. Bytes are what the elements take (raw, typed or external storage).
  int64_t parameter_count = 0;  // elements over all initializers and Constant nodes
  int64_t parameter_bytes = 0;
  int64_t initializer_count = 0;
  int64_t initializer_parameters = 0;
  int64_t initializer_bytes = 0;
  // A Constant's value, value_float(s), value_int(s), value_string(s) or sparse_value (its values
  // and indices).
  int64_t constant_node_count = 0;
  int64_t constant_node_parameters = 0;
  int64_t constant_node_bytes = 0;
  bool has_external_data = false;  // some initializer lives in a side file
  // Some value is bfloat16 (an initializer, a declared value or a Cast's target): ONNX Runtime's
  // CPU provider has no bfloat16 kernels, so its backend runs such a model emulated
  // (graph/internal/bfloat16_emulation.h).
  bool uses_bfloat16 = false;
  // Distinct 'location' entries of those initializers, sorted, as written in the model: paths
  // relative to the model's directory.
  std::vector<std::string> external_data_files;
};

// Parses and summarises an ONNX model file. A file that is not a parseable ModelProto (truncated,
// not ONNX) is DataLoss naming the file; a model without a graph is DataLoss too. A missing file is
// NotFound.
Result<ModelSummary> SummarizeOnnxModel(const std::filesystem::path& path);

// The same from bytes already in memory; `path` is recorded and used in messages. sha256 is left
// empty (hashing a large model costs seconds that a backend loading it does not need).
Result<ModelSummary> SummarizeOnnxModelBytes(std::string_view model_bytes,
                                             const std::filesystem::path& path);

// The same from the file, parsed as it is read (the bytes are never held whole), for a backend
// about to load the model itself: sha256 is left empty, and the peak is the parsed model only.
Result<ModelSummary> SummarizeOnnxModelFile(const std::filesystem::path& path);

// The same without the main graph's initializer data, skipped as the file is read
// (ParseModelStructureFile): the peak holds the model's structure only. Initializer bytes are
// then counted from dims and element type (what a tensor takes in memory), not from the stored
// data; everything else is SummarizeOnnxModelFile's.
Result<ModelSummary> SummarizeOnnxModelStructure(const std::filesystem::path& path);

// The model file without its weights, serialized: the data of every main-graph initializer over
// 1 KiB is left out as the file is read (SummarizeOnnxModelStructure's parse). The functions that
// take model bytes to read a model's structure (IntermediateNames, ListNodes, InferValueBytes) give
// the same answers from these, without a copy of the weights. Errors as SummarizeOnnxModelFile.
Result<std::string> ReadModelStructureBytes(const std::filesystem::path& path);

// Serialized copy of the model whose graph outputs are its existing outputs (in their order)
// followed by those of `output_names` that are not already outputs (in the order given, duplicates
// dropped). The types of new outputs come from the model's value_info, or ONNX shape inference;
// when neither knows one the output is added without a type and the runtime infers it. A name that
// no main-graph node, initializer or graph input produces is NotFound naming it and the model.
Result<std::string> WithOutputs(const std::string& model_bytes,
                                const std::vector<std::string>& output_names,
                                const std::filesystem::path& model_path_for_messages);

// The bytes that, appended to the model file at `model_path`, give the model WithOutputs would
// (the same outputs with the same types, except that shape inference sees the initializers'
// dims but not their values; types only inform the runtime): protobuf merges a message's
// repeated fields across concatenated encodings. Only the model's structure is read
// (ParseModelStructureFile), so a runtime can load a marked copy of a large model from a file
// while nothing holds its weights but the runtime itself. Empty when nothing is added.
Result<std::string> OutputsSuffix(const std::filesystem::path& model_path,
                                  const std::vector<std::string>& output_names);

// The model at `model_path` with the outputs WithOutputs adds (typed as OutputsSuffix types them),
// serialized without its weights: every main-graph initializer stored as raw bytes becomes ONNX
// external data at its place in the file named `weights_location`, relative to the folder the
// result is loaded from, which must be the same file (a hard link); the few stored otherwise are
// carried. A runtime reading external data then builds the marked model from the file's own
// bytes: no copy of the file is written and no serialized copy of the weights is parsed.
Result<std::string> WithOutputsReferencingWeights(const std::filesystem::path& model_path,
                                                  const std::vector<std::string>& output_names,
                                                  const std::string& weights_location);

// Every value name produced by a node of the main graph, in node order (ONNX requires nodes to be
// topologically sorted), skipping the empty names of omitted optional outputs.
Result<std::vector<std::string>> IntermediateNames(const std::string& model_bytes);

}  // namespace convgate::graph
