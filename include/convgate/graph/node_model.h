// One node of an ONNX model as a standalone model: per-node validation runs a target node alone on
// the source's tensors to measure the error that node adds by itself (local versus inherited
// error), and a later `reduce` can start from the same extraction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::graph {

struct ModelStructure;  // graph/internal/model_proto.h

// Serialized model holding only main-graph node `node_index` of `model_bytes` (file order), with
// the model's opset imports, IR version and local functions. Each non-empty input of the node
// that `feeds` holds becomes a graph input typed by that tensor (dtype and shape); the others must
// be initializers of the graph and are copied as initializers. The node's non-empty
// outputs are the graph outputs, untyped (the runtime infers them). Errors name `path`:
// InvalidArgument for a bad index, NotFound for an input neither an initializer nor in `feeds`,
// DataLoss for bytes that are not a model.
Result<std::string> SingleNodeModel(std::string_view model_bytes, size_t node_index,
                                    const TensorMap& feeds, const std::filesystem::path& path);

// SingleNodeModel for many nodes of one model file, whose structure is parsed once without the
// weights (ReadModelStructure): per-node validation cuts out every failing node, and parsing
// resnet18's 46 MB once per node took most of its time. Each cut reads the weights of its own
// nodes from the file, so the cutter holds no copy of the model's weights while the one-node
// sessions run. Copies share the parse.
class NodeModelCutter {
 public:
  // Errors name `path`: those of reading it, DataLoss for a file that is not a model.
  static Result<NodeModelCutter> Open(const std::filesystem::path& path);

  // SingleNodeModel of a unit of the file's nodes (indexes in file order, usually one): the
  // unit's inputs that no node of it produces are fed or carried as SingleNodeModel's are, and
  // every output of its nodes is a graph output. A quantized layer (QuantizeLinear,
  // DequantizeLinear, the Conv between them) is cut as one unit. With a `weights_location`, the
  // cut's initializers stored as raw bytes are not copied into it but are external data in the
  // file of that name (relative to the folder the cut is loaded from): the cutter's file,
  // hard-linked there (graph/internal/model_proto.h ReferenceTensorData). A runtime that reads
  // ONNX external data then reads them straight from the file.
  Result<std::string> Cut(const std::vector<size_t>& unit, const TensorMap& feeds,
                          const std::string& weights_location = {}) const;

  // One model holding copy k of unit `units[k]` for every k, side by side: each copy is what Cut
  // gives for its unit, with its nodes' outputs (and names) renamed to SideBySideOutputName(k,
  // name), so no copy feeds another and a unit may appear twice. Inputs that several copies share
  // are one graph input (or initializer). One runtime session then runs every unit alone, each on
  // its own inputs: building one session per node took most of per-node validation's time. Cut's
  // errors, and InvalidArgument when a renamed output would clash with a value of the graph.
  // `weights_location` as for Cut.
  Result<std::string> CutSideBySide(const std::vector<std::vector<size_t>>& units,
                                    const TensorMap& feeds,
                                    const std::string& weights_location = {}) const;

  // Serialized size of the initializers the unit's nodes read (0 for a bad index): what a cut of
  // it copies without a weights_location, whatever is fed.
  int64_t InitializerBytes(const std::vector<size_t>& unit) const;

 private:
  std::shared_ptr<const ModelStructure> structure_;
  std::filesystem::path path_;
};

// The name output `name` of copy `copy_index` has in a NodeModelCutter::CutSideBySide model.
std::string SideBySideOutputName(size_t copy_index, const std::string& name);

// Bytes of every value of the main graph whose element type and shape ONNX shape inference can
// determine once the graph inputs take the shapes in `input_shapes` (name -> dims; symbolic dims
// are replaced by these). Values it cannot size are absent. Best effort: when inference fails the
// map holds what the model's own value_info declares. With `dtypes`, also the element type of
// every value (graph inputs included) whose type is known, sized or not.
Result<std::map<std::string, int64_t>> InferValueBytes(
    std::string_view model_bytes, const std::map<std::string, std::vector<int64_t>>& input_shapes,
    const std::filesystem::path& path, std::map<std::string, DType>* dtypes = nullptr);

}  // namespace convgate::graph
