// Running per-node validation on two loaded models (internal to src/gate): matching intermediate
// tensors by name, fetching and comparing them chunk by chunk within the memory budget, and
// re-running failing target nodes alone on the source's tensors.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/compare/noise_floor.h"
#include "convgate/compare/policy.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/gate/per_node.h"
#include "convgate/graph/nodes.h"

namespace convgate::gate::internal {

// One side as per-node validation uses it. Not owned.
struct PerNodeSide {
  backends::Backend* backend = nullptr;
  backends::Model* model = nullptr;
  std::filesystem::path path;  // the ONNX file (its graph names the intermediates)
  std::string role;            // "source", "target"
  // The samples as this side takes them, when not the data set's as they are (a float16 target
  // without keep-IO-types takes its inputs cast): same names, same order. Not owned.
  const std::vector<TensorMap>* inputs = nullptr;
};

// Sample `index` as `side` takes it: its own inputs, or the data set's.
inline const TensorMap& SampleFor(const PerNodeSide& side, const std::vector<TensorMap>& samples,
                                  size_t index) {
  return side.inputs != nullptr ? (*side.inputs)[index] : samples[index];
}

// Everything the steps share; built once by RunPerNode.
struct PerNodeContext {
  PerNodeSide source;
  PerNodeSide target;
  backends::LoadOptions source_load;  // as the gate loaded the source (calibration varies it)
  backends::LoadOptions target_load;  // for the one-node models
  const std::vector<TensorMap>* samples = nullptr;
  const compare::Policy* policy = nullptr;
  std::string target_bytes;  // the target's structure (no weights), until sizes are estimated
  std::vector<graph::NodeInfo> target_nodes;
  std::vector<graph::NodeInfo> source_nodes;  // the source's nodes (fusion.cc)
  std::set<std::string> source_produced;      // tensors a source node produces
  std::set<std::string> target_produced;
  std::map<std::string, size_t> target_producer;  // tensor -> index into target_nodes
  std::map<std::string, int64_t> sizes;           // estimated bytes per tensor
  // The dtype each target value has (shape inference on an ONNX target, then what was fetched):
  // a node run alone is fed the source's tensors cast to these, as the target computes them.
  std::map<std::string, DType> target_dtypes;
  // The target quantizes (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, ...) and the
  // source does not: matched tensors are compared as the target's consumers read them
  // (NodeCheck::target_tensor), and a node is run alone with its quantization (local_error.cc).
  bool quantized = false;
  int64_t fallback_size = 0;  // for tensors shape inference could not size
  int64_t budget = 0;
  // The source's tensors of the last chunk, per sample, when it ran ahead (run.cc CompareChunk):
  // local errors take their source tensors from here before fetching them again, which for a
  // model of one chunk spares building the source's session once more.
  std::vector<TensorMap> last_source_chunk;
  // Calibrated: each matched tensor's noise floor (Calibrate), over every sample.
  std::map<std::string, compare::NoiseFloor> floors;

  const compare::NoiseFloor* FloorOf(const std::string& name) const;
  // The target node producing `tensor`; nullptr for graph inputs and initializers.
  const graph::NodeInfo* TargetProducer(const std::string& tensor) const;

  int64_t SizeOf(const std::string& name) const;
};

// Compares every matched intermediate of every sample (chunked) and fills `report`, then adds
// local errors per `options.local_error` and analyses the result. Errors are for what stops the
// whole run (an unreadable model file); a tensor that cannot be fetched is an errored node.
Result<PerNodeReport> RunPerNode(const PerNodeSide& source,
                                 const backends::LoadOptions& source_load,
                                 const PerNodeSide& target,
                                 const backends::LoadOptions& target_load,
                                 const std::vector<TensorMap>& samples,
                                 const compare::Policy& policy, const PerNodeOptions& options);

// Condensed comparison of one tensor under the policy's resolution for `name`; with a `floor`, a
// default atol is raised to compare::kNoiseFloorFactor x floor->max_abs and the error is given as
// a multiple of the floor.
NodeSampleResult CompareNodeTensor(int sample, const std::string& name, const Tensor& source,
                                   const Tensor& target, const compare::Policy& policy,
                                   const compare::NoiseFloor* floor = nullptr);

// How far `variant` (the source under a benign change) differs from `source`, over their finite
// pairs, folded into `floor` (one more sample). Tensors of different dtypes or shapes add nothing.
void AddToFloor(const Tensor& source, const Tensor& variant, compare::NoiseFloor& floor);

// Runs `model` on `sample` for `names`; if the run fails, retries name by name so one tensor the
// backend cannot expose does not hide the others. Fetched tensors go to `out`, failures (name ->
// message) to `errors`. Counts runs.
void FetchTensors(backends::Model& model, const TensorMap& sample,
                  const std::vector<std::string>& names, TensorMap& out,
                  std::map<std::string, std::string>& errors, int& runs);

// Frees the side's runtime copy of its model if its backend can build it again (ReleasableModel)
// and returns the freed memory, so that the other side's session is not built beside it.
void ReleaseSide(const PerNodeSide& side);

// An OpenVINO IR target (context.source_nodes set): compares a source tensor only with the IR
// tensor that carries its value. A matched tensor whose producer the IR layer carrying its name
// lists as fused but not last (its rt_info fused_names) moves to report.not_comparable, and so
// does a source tensor the IR lacks whose consumers lead only into a matched layer; each layer's
// NodeCheck::fused names the source nodes it carries. For any target, a matched tensor whose value
// the target changed under the same name (a BatchNorm folded into the Conv before it, the Conv's
// output name kept) moves to report.not_comparable too, with the source tensor it now carries.
void ApplyFusion(const PerNodeContext& context, PerNodeReport& report);

// `tensor` in dtype `to` (a floating one), each element rounded to nearest even: a source tensor
// as a float16 target computes with it.
Result<Tensor> CastFloat(const Tensor& tensor, DType to);

// Sets node.local for the report's nodes that `mode` selects (failed ones, or all).
// Takes what it uses of context.last_source_chunk.
void ComputeLocalErrors(PerNodeContext& context, LocalErrorMode mode, PerNodeReport& report);

}  // namespace convgate::gate::internal
