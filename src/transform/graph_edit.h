// Graph queries and edits shared by the passes (internal to src/transform). Passes work on the
// main graph; names referenced from subgraphs (If/Loop/Scan bodies) count as uses, so nothing a
// body still reads is removed or renamed away.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::transform {

// The initializer named `name`, or nullptr; also nullptr when a graph input of the same name may
// override it (IR < 4 style), since its value is then not a constant.
const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, const std::string& name);

// Between TensorProto and Tensor (through io's TensorProto reader, so every storage form it reads
// works). Errors name the tensor (`name`, else the proto's own name): Unimplemented for external
// data and types convgate cannot hold.
Result<Tensor> ToTensor(const onnx::TensorProto& proto, const std::string& name = "");
Result<onnx::TensorProto> ToProto(const Tensor& tensor, const std::string& name);

// How many times each value is read: node inputs (subgraph nodes included) and graph outputs.
std::unordered_map<std::string, int> UseCounts(const onnx::GraphProto& graph);

bool IsGraphOutput(const onnx::GraphProto& graph, const std::string& name);

// Main-graph node indices by the value names they produce.
std::unordered_map<std::string, int> Producers(const onnx::GraphProto& graph);

// Names not used in the graph (values and nodes, subgraphs included).
class UniqueNames {
 public:
  explicit UniqueNames(const onnx::GraphProto& graph);
  // `base` if free, else base_1, base_2, ...; the name returned is taken from then on.
  std::string Make(const std::string& base);

 private:
  std::unordered_set<std::string> taken_;
};

// Removes the main-graph nodes whose index is in `remove`, keeping the order of the rest.
void EraseNodes(onnx::GraphProto& graph, const std::unordered_set<int>& remove);

// Initializers no node (subgraphs included) reads and that are not graph inputs or outputs.
void RemoveUnusedInitializers(onnx::GraphProto& graph);

// Replaces every read of `from` by `to` (subgraph nodes included). Returns the indices of the
// main-graph nodes that changed (a node whose subgraph reads `from` counts as changed).
std::vector<int> ReplaceUses(onnx::GraphProto& graph, const std::string& from,
                             const std::string& to);

// Rank of every value ONNX shape inference (on a copy) can tell, graph inputs included. Empty
// when inference fails: passes that need a rank then leave the node alone.
std::unordered_map<std::string, int> KnownRanks(const onnx::ModelProto& model);

// The opset version imported for the default ONNX domain (0 when none).
int64_t DefaultOpset(const onnx::ModelProto& model);

// Float dtypes whose arithmetic passes may rewrite (float32, float64, float16, bfloat16).
bool IsFloatElemType(int32_t elem_type);

}  // namespace convgate::transform
