// Per-node validation: match the two graphs' intermediate tensors by name, then fetch and compare
// them chunk by chunk (each chunk one run of each side per sample) so the memory held at once stays
// within the budget.
#include "gate/per_node/run.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "convgate/backends/releasable.h"
#include "convgate/compare/tensor_compare.h"
#include "convgate/core/file_util.h"
#include "convgate/core/progress.h"
#include "convgate/gate/judge.h"
#include "convgate/graph/node_model.h"
#include "convgate/graph/nodes.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/graph/openvino_ir.h"
#include "convgate/graph/precision.h"
#include "convgate/session/side.h"

namespace convgate::gate::internal {
namespace {

// Shape inference cannot size every tensor (data-dependent shapes, custom ops); those are assumed
// as large as the largest tensor it could size, and this when it could size none.
constexpr int64_t kUnknownTensorBytes = int64_t{16} << 20;

NodeSampleResult Condense(int sample, const OutputCheck& check) {
  const compare::TensorComparison& comparison = *check.comparison;
  NodeSampleResult result;
  result.sample = sample;
  result.passed = check.passed;
  result.source_desc = comparison.source_desc;
  result.target_desc = comparison.target_desc;
  result.elements = comparison.num_elements;
  result.mismatches = comparison.mismatches;
  result.max_abs_error = comparison.errors.max_abs_error;
  result.mean_abs_error = comparison.errors.mean_abs_error;
  result.max_rel_error = comparison.errors.max_rel_error;
  result.p99_abs_error = comparison.errors.abs_error_percentiles[3];  // kPercentiles[3] is 99
  result.cosine = comparison.metrics.cosine;
  result.snr_db = comparison.metrics.snr_db;
  result.atol = check.tolerance.atol;
  result.rtol = check.tolerance.rtol;
  const compare::ValueSummary& source = comparison.source_values;
  const compare::ValueSummary& target = comparison.target_values;
  result.source_min = source.min;
  result.source_max = source.max;
  result.target_min = target.min;
  result.target_max = target.max;
  result.source_non_finite = source.nan + source.pos_inf + source.neg_inf;
  result.target_non_finite = target.nan + target.pos_inf + target.neg_inf;
  result.introduced_nan = comparison.non_finite.introduced_nan;
  result.introduced_inf = comparison.non_finite.introduced_inf;
  result.introduced_non_finite = result.introduced_nan + result.introduced_inf;
  result.inherited_non_finite = comparison.non_finite.inherited;
  if (!check.passed) result.failures = check.failures;
  return result;
}

// For each tensor a QDQ target quantizes, what its consumers read: the output of the first
// DequantizeLinear fed by the first QuantizeLinear of it (T -> T_DequantizeLinear_Output).
std::map<std::string, std::string> DequantizedTensors(const std::vector<graph::NodeInfo>& nodes) {
  std::map<std::string, std::string> quantized, dequantized;  // input -> output, per op
  for (const graph::NodeInfo& info : nodes) {
    if (info.inputs.empty() || info.outputs.empty() || info.outputs.front().empty()) continue;
    if (info.op_type == "QuantizeLinear") quantized.emplace(info.inputs.front(), info.outputs[0]);
    if (info.op_type == "DequantizeLinear") {
      dequantized.emplace(info.inputs.front(), info.outputs[0]);
    }
  }
  std::map<std::string, std::string> read;
  for (const auto& [tensor, quantized_output] : quantized) {
    auto found = dequantized.find(quantized_output);
    if (found != dequantized.end()) read.emplace(tensor, found->second);
  }
  return read;
}

// Target nodes' outputs in topological order; those the source also produces become NodeChecks.
void MatchTensors(const PerNodeContext& context, PerNodeReport& report) {
  const std::map<std::string, std::string> dequantized =
      context.quantized ? DequantizedTensors(context.target_nodes)
                        : std::map<std::string, std::string>();
  for (size_t node_idx = 0; node_idx < context.target_nodes.size(); ++node_idx) {
    const graph::NodeInfo& info = context.target_nodes[node_idx];
    for (const std::string& output : info.outputs) {
      if (output.empty()) continue;
      if (context.source_produced.count(output) == 0) {
        report.unmatched_target.push_back(output);
        continue;
      }
      NodeCheck check;
      check.node_index = static_cast<int>(node_idx);
      check.node = info.name;
      check.op_type = info.op_type;
      check.inputs = info.inputs;
      check.tensor = output;
      if (auto read = dequantized.find(output); read != dequantized.end()) {
        check.target_tensor = read->second;
      }
      report.nodes.push_back(std::move(check));
    }
  }
  for (const std::string& name : context.source_produced) {
    if (context.target_produced.count(name) == 0) report.unmatched_source.push_back(name);
  }
}

void Record(NodeCheck& node, NodeSampleResult result) {
  if (!result.passed && node.status == NodeStatus::kPassed) {
    node.status = NodeStatus::kFailed;
    node.first_failing_sample = result.sample;
  }
  node.max_abs_error = std::max(node.max_abs_error, result.max_abs_error);
  node.samples.push_back(std::move(result));
}

void MarkErrored(NodeCheck& node, const std::string& message) {
  if (node.status == NodeStatus::kErrored) return;
  node.status = NodeStatus::kErrored;
  node.error = message;
}

// One side's tensors of a chunk on one sample, and the names it could not fetch (name -> message).
struct Fetched {
  TensorMap tensors;
  std::map<std::string, std::string> errors;
};

Fetched FetchChunk(const PerNodeSide& side, const TensorMap& sample,
                   const std::vector<std::string>& names, int& runs) {
  Fetched fetched;
  FetchTensors(*side.model, sample, names, fetched.tensors, fetched.errors, runs);
  return fetched;
}

// Compares one chunk's tensors of one sample, fetched from both sides.
void JudgeChunk(PerNodeContext& context, int sample_idx, const std::vector<size_t>& chunk,
                Fetched& source_side, Fetched& target_side, PerNodeReport& report) {
  for (size_t node_idx : chunk) {
    NodeCheck& node = report.nodes[node_idx];
    const Tensor* source = source_side.tensors.Find(node.tensor);
    const Tensor* target = target_side.tensors.Find(node.TargetTensor());
    if (source == nullptr || target == nullptr) {
      MarkErrored(node, "sample " + std::to_string(sample_idx) + ": " +
                            (source ? "target: " + target_side.errors[node.TargetTensor()]
                                    : "source: " + source_side.errors[node.tensor]));
      continue;
    }
    context.target_dtypes[node.TargetTensor()] = target->dtype();
    Record(node, CompareNodeTensor(sample_idx, node.tensor, *source, *target, *context.policy,
                                   context.FloorOf(node.tensor)));
  }
}

// One chunk over every sample. When the source's tensors of every sample fit in the budget's
// half that the plan gave them (always with one sample), the source runs them all first and
// lets its session go before the target builds its own, so the two sessions (each a copy of its
// weights) are never held at once; otherwise both sides run each sample in turn.
void CompareChunk(PerNodeContext& context, const std::vector<size_t>& chunk, int64_t chunk_bytes,
                  PerNodeReport& report) {
  std::vector<std::string> names, target_names;
  for (size_t node_idx : chunk) {
    names.push_back(report.nodes[node_idx].tensor);
    target_names.push_back(report.nodes[node_idx].TargetTensor());
  }
  const std::vector<TensorMap>& samples = *context.samples;
  // The plan counts both sides of one sample: held ahead are every sample's source tensors and
  // one sample's target tensors. A tensor over the budget has a chunk of its own, over it anyway.
  const int64_t one_side = chunk_bytes / 2;
  const int64_t allowed = std::max(context.budget, chunk_bytes);
  const int64_t held_sides = static_cast<int64_t>(samples.size()) + 1;
  const bool ahead =
      backends::AsReleasable(*context.source.model) != nullptr && one_side <= allowed / held_sides;
  if (!ahead) {
    for (size_t sample_idx = 0; sample_idx < samples.size(); ++sample_idx) {
      Fetched source = FetchChunk(context.source, samples[sample_idx], names, report.runs);
      Fetched target = FetchChunk(context.target, SampleFor(context.target, samples, sample_idx),
                                  target_names, report.runs);
      JudgeChunk(context, static_cast<int>(sample_idx), chunk, source, target, report);
    }
    return;
  }
  std::vector<Fetched> source(samples.size());
  for (size_t sample_idx = 0; sample_idx < samples.size(); ++sample_idx) {
    source[sample_idx] = FetchChunk(context.source, samples[sample_idx], names, report.runs);
  }
  ReleaseSide(context.source);
  context.last_source_chunk.clear();
  for (size_t sample_idx = 0; sample_idx < samples.size(); ++sample_idx) {
    Fetched target = FetchChunk(context.target, SampleFor(context.target, samples, sample_idx),
                                target_names, report.runs);
    // The next chunk, or local errors, start with the source; the last sample is judged without
    // the target's session (its weights and buffers), which only the tensors outlive.
    if (sample_idx + 1 == samples.size()) ReleaseSide(context.target);
    JudgeChunk(context, static_cast<int>(sample_idx), chunk, source[sample_idx], target, report);
    context.last_source_chunk.push_back(std::move(source[sample_idx].tensors));
  }
}

void EstimateSizes(PerNodeContext& context) {
  std::map<std::string, std::vector<int64_t>> input_shapes;
  for (const auto& entry : context.samples->front()) {
    input_shapes[entry.name] = entry.tensor.shape().dims();
  }
  // An IR is sized by its ONNX source's graph, whose dtypes are the source's, not the IR's.
  const bool own_graph = !graph::IsOpenVinoIr(context.target.path);
  Result<std::map<std::string, int64_t>> sizes =
      graph::InferValueBytes(context.target_bytes, input_shapes, context.target.path,
                             own_graph ? &context.target_dtypes : nullptr);
  if (sizes.ok()) context.sizes = std::move(sizes).value();
  context.fallback_size = kUnknownTensorBytes;
  if (!context.sizes.empty()) {
    context.fallback_size = 0;
    for (const auto& [name, bytes] : context.sizes) {
      context.fallback_size = std::max(context.fallback_size, bytes);
    }
  }
}

// Both graphs are read without their weights: names, nodes and shape inference need the
// structure only, and reading resnet18's two files whole held 94 MB and took a third of a run.
Status LoadGraphs(PerNodeContext& context) {
  {  // the source's structure is gone before the target's is read
    CONVGATE_ASSIGN_OR_RETURN(std::string source_bytes,
                              graph::ReadModelStructureBytes(context.source.path));
    CONVGATE_ASSIGN_OR_RETURN(std::vector<std::string> source_names,
                              graph::IntermediateNames(source_bytes));
    context.source_produced.insert(source_names.begin(), source_names.end());
    // Which source nodes a target node absorbed (fusion.cc): an IR layer's fused names, or a
    // BatchNorm an optimizer folded into the Conv before it under the Conv's tensor name.
    CONVGATE_ASSIGN_OR_RETURN(context.source_nodes,
                              graph::ListNodes(source_bytes, context.source.path));
  }
  if (graph::IsOpenVinoIr(context.target.path)) {
    CONVGATE_ASSIGN_OR_RETURN(std::string ir_bytes, ReadFile(context.target.path));
    // An IR keeps its ONNX source's tensor names, so the source's shape inference sizes them.
    CONVGATE_ASSIGN_OR_RETURN(context.target_nodes,
                              graph::ListOpenVinoIrNodes(ir_bytes, context.target.path));
    CONVGATE_ASSIGN_OR_RETURN(context.target_bytes,
                              graph::ReadModelStructureBytes(context.source.path));
  } else {
    CONVGATE_ASSIGN_OR_RETURN(context.target_bytes,
                              graph::ReadModelStructureBytes(context.target.path));
    CONVGATE_ASSIGN_OR_RETURN(context.target_nodes,
                              graph::ListNodes(context.target_bytes, context.target.path));
  }
  for (size_t idx = 0; idx < context.target_nodes.size(); ++idx) {
    for (const std::string& output : context.target_nodes[idx].outputs) {
      if (output.empty()) continue;
      context.target_produced.insert(output);
      context.target_producer.emplace(output, idx);
    }
  }
  auto quantizes = [](const std::vector<graph::NodeInfo>& nodes) {
    return std::any_of(nodes.begin(), nodes.end(), [](const graph::NodeInfo& info) {
      return graph::IsQuantizationOp(info.op_type);
    });
  };
  context.quantized = quantizes(context.target_nodes) && !quantizes(context.source_nodes);
  return Status::OK();
}

// "ONNX Runtime graph optimization disabled (the gate's: extended)".
std::string LevelChange(backends::GraphOptimization variant, backends::GraphOptimization gate) {
  return std::string("ONNX Runtime graph optimization ") +
         backends::GraphOptimizationName(variant) +
         " (the gate's: " + backends::GraphOptimizationName(gate) + ")";
}

// The source loaded again under a benign change, for the noise floors: ONNX Runtime's graph
// optimization disabled against the gate's level (extended when the gate's is disabled: the
// fusions change the summation order), and one thread against the runtime's choice (one against
// two when the gate asked for one). nullptr, with a note, when it cannot be loaded.
std::unique_ptr<backends::Model> LoadVariant(const PerNodeContext& context, PerNodeReport& report) {
  backends::LoadOptions load = context.source_load;
  const backends::GraphOptimization gate_level = load.graph_optimization;
  load.graph_optimization = gate_level == backends::GraphOptimization::kDisabled
                                ? backends::GraphOptimization::kExtended
                                : backends::GraphOptimization::kDisabled;
  load.intra_op_threads = context.source_load.intra_op_threads == 1 ? 2 : 1;
  const std::string threads =
      std::to_string(load.intra_op_threads) + (load.intra_op_threads == 1 ? " thread" : " threads");
  const std::string change = context.source.backend->name() == "ort"
                                 ? LevelChange(load.graph_optimization, gate_level) + ", " + threads
                                 : threads + " (the " + context.source.backend->name() +
                                       " backend has no graph optimization level)";
  Result<std::unique_ptr<backends::Model>> variant =
      context.source.backend->Load(context.source.path, load);
  if (!variant.ok()) {
    report.notes.push_back(
        "no per-tensor noise floors: the source could not be loaded again with " + change + ": " +
        variant.status().ToString());
    return nullptr;
  }
  report.calibration = change;
  return std::move(variant).value();
}

// The noise floors of one chunk's tensors: the source and its variant run on every sample.
void CalibrateChunk(PerNodeContext& context, backends::Model& variant,
                    const std::vector<size_t>& chunk, PerNodeReport& report) {
  std::vector<std::string> names;
  for (size_t node_idx : chunk) names.push_back(report.nodes[node_idx].tensor);
  for (const TensorMap& sample : *context.samples) {
    TensorMap source, varied;
    std::map<std::string, std::string> errors;
    FetchTensors(*context.source.model, sample, names, source, errors, report.runs);
    FetchTensors(variant, sample, names, varied, errors, report.runs);
    for (const std::string& name : names) {
      const Tensor* left = source.Find(name);
      const Tensor* right = varied.Find(name);
      if (left != nullptr && right != nullptr) AddToFloor(*left, *right, context.floors[name]);
    }
  }
  for (size_t node_idx : chunk) {
    NodeCheck& node = report.nodes[node_idx];
    if (const compare::NoiseFloor* floor = context.FloorOf(node.tensor)) node.noise_floor = *floor;
  }
}

void CompareAllChunks(PerNodeContext& context, bool calibrate, PerNodeReport& report) {
  std::vector<int64_t> costs;
  for (const NodeCheck& node : report.nodes) {
    costs.push_back(2 * context.SizeOf(node.tensor));  // held by both sides at once
  }
  const std::vector<std::vector<size_t>> chunks = PlanChunks(costs, context.budget);
  report.chunks = static_cast<int>(chunks.size());
  if (chunks.size() > 1) {
    report.notes.push_back(
        "intermediates were fetched in " + std::to_string(chunks.size()) +
        " chunks to stay within the memory budget; a runtime may fuse nodes whose outputs a chunk "
        "does not request, so values can differ from a single run by rounding");
  }
  std::unique_ptr<backends::Model> variant =
      calibrate && !report.nodes.empty() ? LoadVariant(context, report) : nullptr;
  // Chunk-major: a runtime that builds a session per set of requested tensors (ONNX Runtime)
  // builds each one once, not once per sample.
  ProgressTask progress("per-node", static_cast<int64_t>(chunks.size()));
  for (size_t chunk_idx = 0; chunk_idx < chunks.size(); ++chunk_idx) {
    const std::vector<size_t>& chunk = chunks[chunk_idx];
    progress.Advance(static_cast<int64_t>(chunk_idx),
                     "chunk " + std::to_string(chunk_idx + 1) + " of " +
                         std::to_string(chunks.size()) + ": " + std::to_string(chunk.size()) +
                         (chunk.size() == 1 ? " tensor of " : " tensors of ") +
                         std::to_string(report.nodes.size()));
    int64_t chunk_bytes = 0;
    for (size_t idx : chunk) chunk_bytes += costs[idx];
    report.largest_chunk_bytes = std::max(report.largest_chunk_bytes, chunk_bytes);
    if (variant) CalibrateChunk(context, *variant, chunk, report);
    CompareChunk(context, chunk, chunk_bytes, report);
    // Each chunk's tensors and session are freed; returning the memory keeps the process's peak
    // from growing chunk after chunk, so the budget stays meaningful.
    session::ReleaseFreedMemory();
  }
}

// An fp16 (or bf16) conversion computes inside the graph in the narrower type while keeping the
// model's inputs and outputs in float32, so its intermediates differ in dtype by design: between
// floating types the values are what is judged (under the tolerance the policy resolves for the
// target's dtype), not the dtype itself. The descriptions still show both dtypes.
void AllowFloatPrecisionChange(compare::TensorComparison& comparison, DType source, DType target) {
  if (source == target || !IsFloating(source) || !IsFloating(target)) return;
  auto& failures = comparison.failures;
  failures.erase(std::remove_if(failures.begin(), failures.end(),
                                [](const std::string& sentence) {
                                  return sentence.rfind("dtype mismatch:", 0) == 0;
                                }),
                 failures.end());
  comparison.passed = failures.empty();
}

}  // namespace

void ReleaseSide(const PerNodeSide& side) {
  backends::ReleasableModel* releasable = backends::AsReleasable(*side.model);
  if (releasable == nullptr) return;
  releasable->Release();
  session::ReleaseFreedMemory();
}

const graph::NodeInfo* PerNodeContext::TargetProducer(const std::string& tensor) const {
  auto found = target_producer.find(tensor);
  return found == target_producer.end() ? nullptr : &target_nodes[found->second];
}

const compare::NoiseFloor* PerNodeContext::FloorOf(const std::string& name) const {
  auto found = floors.find(name);
  return found == floors.end() || found->second.samples == 0 ? nullptr : &found->second;
}

void AddToFloor(const Tensor& source, const Tensor& variant, compare::NoiseFloor& floor) {
  if (source.dtype() != variant.dtype() || source.shape() != variant.shape() ||
      !IsFloating(source.dtype())) {
    return;
  }
  for (int64_t flat = 0; flat < source.num_elements(); ++flat) {
    const double left = source.GetDouble(flat);
    const double right = variant.GetDouble(flat);
    if (!std::isfinite(left) || !std::isfinite(right)) continue;
    const double diff = std::abs(left - right);
    floor.max_abs = std::max(floor.max_abs, diff);
    floor.max_rel =
        std::max(floor.max_rel, diff / std::max(std::abs(left), compare::kRelErrorFloor));
  }
  ++floor.samples;
}

int64_t PerNodeContext::SizeOf(const std::string& name) const {
  auto found = sizes.find(name);
  return found == sizes.end() ? fallback_size : found->second;
}

NodeSampleResult CompareNodeTensor(int sample, const std::string& name, const Tensor& source,
                                   const Tensor& target, const compare::Policy& policy,
                                   const compare::NoiseFloor* floor) {
  OutputCheck check;
  check.sample = sample;
  check.output = name;
  check.policy = policy.For(name, source.dtype(), target.dtype());
  // A tolerance nobody set rises to the floor's reach (noise_floor.h); a set one is the user's.
  const std::string& origin = check.policy.atol_origin;
  const bool set = origin == "global setting" || origin == "output setting";
  if (floor != nullptr && !set && compare::kNoiseFloorFactor * floor->max_abs > check.policy.atol) {
    check.policy.atol = compare::kNoiseFloorFactor * floor->max_abs;
    check.policy.atol_origin = "noise floor";
  }
  check.tolerance = check.policy.tolerance();
  // A node's result keeps statistics, not the summary `check` re-judges outputs from.
  compare::CompareOptions options;
  options.error_summary = false;
  check.comparison = compare::CompareTensors(source, target, check.tolerance, options);
  AllowFloatPrecisionChange(*check.comparison, source.dtype(), target.dtype());
  JudgeCheck(check, &source, &target);
  NodeSampleResult result = Condense(sample, check);
  if (floor != nullptr) {
    result.floor_multiple = floor->max_abs > 0         ? result.max_abs_error / floor->max_abs
                            : result.max_abs_error > 0 ? std::numeric_limits<double>::infinity()
                                                       : 0.0;
  }
  return result;
}

void FetchTensors(backends::Model& model, const TensorMap& sample,
                  const std::vector<std::string>& names, TensorMap& out,
                  std::map<std::string, std::string>& errors, int& runs) {
  if (names.empty()) return;
  ++runs;
  Result<TensorMap> fetched = model.Run(sample, names);
  if (fetched.ok()) {
    for (auto& entry : *fetched) out.InsertOrAssign(entry.name, std::move(entry.tensor));
    return;
  }
  if (names.size() == 1) {
    errors[names.front()] = fetched.status().ToString();
    return;
  }
  for (const std::string& name : names) FetchTensors(model, sample, {name}, out, errors, runs);
}

Result<PerNodeReport> RunPerNode(const PerNodeSide& source,
                                 const backends::LoadOptions& source_load,
                                 const PerNodeSide& target,
                                 const backends::LoadOptions& target_load,
                                 const std::vector<TensorMap>& samples,
                                 const compare::Policy& policy, const PerNodeOptions& options) {
  PerNodeReport report;
  report.strict = options.strict;
  report.local_error_mode = std::string(LocalErrorModeName(options.local_error));
  report.memory_budget_bytes =
      options.memory_budget_bytes > 0 ? options.memory_budget_bytes : DefaultMemoryBudget();
  if (samples.empty()) return report;
  PerNodeContext context;
  context.source = source;
  context.target = target;
  context.source_load = source_load;
  context.target_load = target_load;
  context.samples = &samples;
  context.policy = &policy;
  context.budget = report.memory_budget_bytes;
  // The target's session from the outputs comparison is not what the chunks ask for (each asks
  // for its own intermediates); held on, it would sit beside the graphs parsed below and the
  // source's first chunk session (resnet18: 60 MB more at the peak).
  ReleaseSide(context.target);
  CONVGATE_RETURN_IF_ERROR(LoadGraphs(context));
  EstimateSizes(context);
  // Not held while the models run: local errors parse the file again, once (NodeModelCutter).
  context.target_bytes = std::string();
  MatchTensors(context, report);
  report.quantized = context.quantized;
  ApplyFusion(context, report);
  if (report.nodes.empty()) {
    report.notes.push_back(
        "nothing was compared node by node: the graphs share no intermediate tensor names (" +
        std::to_string(report.unmatched_target.size()) + " target and " +
        std::to_string(report.unmatched_source.size()) + " source tensors unmatched)");
  }
  CompareAllChunks(context, options.calibrate, report);
  AnalyzePerNode(report);
  LocalErrorMode local_error = options.local_error;
  if (graph::IsOpenVinoIr(target.path) && local_error != LocalErrorMode::kNone) {
    // A one-node model is cut out of the target's ONNX graph; an IR has none to cut.
    local_error = LocalErrorMode::kNone;
    report.culprit_not_determined = "no local test against an OpenVINO IR";
    report.notes.push_back(
        "no local errors: the target is an OpenVINO IR, and a single node is cut out of an ONNX "
        "target only; the blame follows the per-node comparison alone");
  }
  ComputeLocalErrors(context, local_error, report);
  AnalyzePerNode(report);
  return report;
}

}  // namespace convgate::gate::internal
