// Local versus inherited error: a target node run alone on the source's tensors for its inputs
// shows the error that node adds by itself. A node downstream of a broken one fails the ordinary
// comparison (its inputs already differ) but passes here; the broken node fails both.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>

#include "convgate/core/scratch_file.h"
#include "convgate/core/temp_dir.h"
#include "convgate/graph/node_model.h"
#include "convgate/graph/precision.h"
#include "gate/per_node/run.h"

namespace convgate::gate::internal {
namespace {

// What one node needs fetched: its inputs from the source (or, lacking a source counterpart, from
// the target) and its output from the source, as the reference.
struct LocalNeeds {
  size_t node = 0;                  // index into PerNodeReport::nodes
  std::vector<size_t> unit;         // target nodes run as one (UnitOf), in file order
  std::vector<std::string> inputs;  // the unit's inputs that none of its nodes produces
  std::vector<std::string> from_source;
  std::vector<std::string> from_target;
  // An input only the target names -> the source tensor (or graph input) holding its value, when
  // a Cast is on either side of it. A float16 conversion casts graph inputs and the inputs of a
  // node it keeps in float32 (the input is the Cast's, which the source has), and keeps a node in
  // float32 by renaming its output and casting it back under the original name (the value is the
  // Cast's output, which the source has under that name): that Cast, fed the target's
  // already-wrong tensor, would be charged with every error upstream of it.
  std::map<std::string, std::string> counterparts;
};

// The target nodes run as one with `node`, in file order: the node alone, unless the target
// quantizes and the node's inputs or its output pass through quantization (a QDQ Conv reads its
// input and weight through DequantizeLinear, and its output is read quantized and dequantized).
// Then the unit is every target node between the tensors the source has (or the sample's inputs
// and the initializers) and the value compared, so the quantized layer runs on the source's
// tensors as the target computes them: fed the target's own quantized inputs, it would be charged
// with the error upstream of it. Bounded: a longer chain runs the node alone, as before.
std::vector<size_t> UnitOf(const PerNodeContext& context, const TensorMap& sample,
                           const NodeCheck& node) {
  const size_t own = static_cast<size_t>(node.node_index);
  if (!context.quantized) return {own};
  constexpr size_t kMaxUnit = 16;
  std::set<size_t> unit;
  std::set<std::string> seen;
  std::vector<std::string> pending = {node.TargetTensor()};
  bool quantizes = false;
  while (!pending.empty()) {
    const std::string value = std::move(pending.back());
    pending.pop_back();
    if (value.empty() || !seen.insert(value).second || sample.Contains(value)) continue;
    if (value != node.tensor && context.source_produced.count(value) != 0) continue;  // fed
    const auto producer = context.target_producer.find(value);
    if (producer == context.target_producer.end()) continue;  // an initializer, carried
    if (!unit.insert(producer->second).second) continue;
    if (unit.size() > kMaxUnit) return {own};
    const graph::NodeInfo& info = context.target_nodes[producer->second];
    quantizes = quantizes || graph::IsQuantizationOp(info.op_type);
    pending.insert(pending.end(), info.inputs.begin(), info.inputs.end());
  }
  if (!quantizes || unit.count(own) == 0) return {own};
  return {unit.begin(), unit.end()};
}

// The unit's inputs that none of its nodes produces, each once, in order.
std::vector<std::string> UnitInputs(const PerNodeContext& context,
                                    const std::vector<size_t>& unit) {
  std::set<std::string> produced;
  for (size_t idx : unit) {
    const std::vector<std::string>& outputs = context.target_nodes[idx].outputs;
    produced.insert(outputs.begin(), outputs.end());
  }
  std::vector<std::string> inputs;
  std::set<std::string> seen;
  for (size_t idx : unit) {
    for (const std::string& input : context.target_nodes[idx].inputs) {
      if (produced.count(input) == 0 && seen.insert(input).second) inputs.push_back(input);
    }
  }
  return inputs;
}

LocalNeeds NeedsOf(const PerNodeContext& context, const TensorMap& sample, const NodeCheck& node,
                   size_t node_idx) {
  LocalNeeds needs;
  needs.node = node_idx;
  needs.unit = UnitOf(context, sample, node);
  needs.inputs = needs.unit.size() == 1 ? node.inputs : UnitInputs(context, needs.unit);
  needs.from_source.push_back(node.tensor);
  std::set<std::string> seen;
  for (const std::string& input : needs.inputs) {
    if (input.empty() || sample.Contains(input) || !seen.insert(input).second) continue;
    if (context.source_produced.count(input) != 0) {
      needs.from_source.push_back(input);
    } else if (context.target_produced.count(input) != 0) {
      const graph::NodeInfo* producer = context.TargetProducer(input);
      const std::string cast_input =
          producer != nullptr && producer->op_type == "Cast" && !producer->inputs.empty()
              ? producer->inputs.front()
              : std::string();
      if (!cast_input.empty() && sample.Contains(cast_input)) {
        needs.counterparts[input] = cast_input;
      } else if (!cast_input.empty() && context.source_produced.count(cast_input) != 0) {
        needs.counterparts[input] = cast_input;
        if (seen.insert(cast_input).second) needs.from_source.push_back(cast_input);
      } else if (node.op_type == "Cast") {
        needs.counterparts[input] = node.tensor;  // already fetched from the source
      } else {
        needs.from_target.push_back(input);
      }
    }  // otherwise an initializer, which the one-node model carries
  }
  return needs;
}

// A tensor over `tensor`'s bytes, valid while `tensor` lives: the one-node models' feeds are the
// fetched tensors themselves (runtimes only read their inputs), so the nodes of a chunk can be fed
// at once without a second copy of them. String tensors have no byte view and are copied.
Tensor ViewOf(const Tensor& tensor) {
  if (tensor.dtype() == DType::kString) return tensor.Clone();
  std::span<const std::byte> bytes = tensor.bytes();
  Result<Tensor> view = Tensor::Adopt(
      tensor.dtype(), tensor.shape(),
      std::span<std::byte>(const_cast<std::byte*>(bytes.data()), bytes.size()), nullptr);
  return view.ok() ? std::move(view).value() : tensor.Clone();
}

// The source's tensor as the target's node receives it: cast to the dtype the target has for
// `input` when both are floating and differ (a float16 node is fed float16, as the target's own
// Casts feed it; fed float32 it would not even load).
Result<Tensor> AsTargetFeeds(const PerNodeContext& context, const std::string& input,
                             const Tensor& tensor, LocalError& local) {
  const auto wanted = context.target_dtypes.find(input);
  if (wanted == context.target_dtypes.end() || wanted->second == tensor.dtype() ||
      !IsFloating(wanted->second) || !IsFloating(tensor.dtype())) {
    return ViewOf(tensor);
  }
  local.inputs_cast.push_back("'" + input + "' cast " + std::string(DTypeName(tensor.dtype())) +
                              " -> " + std::string(DTypeName(wanted->second)));
  return CastFloat(tensor, wanted->second);
}

// The feeds of the one-node model: graph inputs from the sample, the rest as fetched.
Result<TensorMap> FeedsOf(const PerNodeContext& context, const TensorMap& sample,
                          const TensorMap& from_source, const TensorMap& from_target,
                          const LocalNeeds& needs, LocalError& local) {
  TensorMap feeds;
  for (const std::string& input : needs.inputs) {
    if (input.empty() || feeds.Contains(input)) continue;
    const Tensor* tensor = sample.Find(input);
    if (tensor == nullptr) tensor = from_source.Find(input);
    if (const auto counterpart = needs.counterparts.find(input);
        tensor == nullptr && counterpart != needs.counterparts.end()) {
      tensor = sample.Find(counterpart->second);
      if (tensor == nullptr) tensor = from_source.Find(counterpart->second);
      if (tensor != nullptr) {
        local.inputs_cast.push_back("'" + input + "' <- the source's '" + counterpart->second +
                                    "' (the value a Cast passes on)");
      }
    }
    if (tensor != nullptr) local.inputs_from_source.push_back(input);
    const bool from_target_side =
        tensor == nullptr && std::count(needs.from_target.begin(), needs.from_target.end(), input);
    if (from_target_side) {
      tensor = from_target.Find(input);
      local.inputs_from_target.push_back(input);
    }
    if (tensor != nullptr && from_target_side) {
      CONVGATE_RETURN_IF_ERROR(feeds.Insert(input, ViewOf(*tensor)));
    } else if (tensor != nullptr) {
      CONVGATE_ASSIGN_OR_RETURN(Tensor fed, AsTargetFeeds(context, input, *tensor, local));
      CONVGATE_RETURN_IF_ERROR(feeds.Insert(input, std::move(fed)));
    } else if (std::count(needs.from_source.begin(), needs.from_source.end(), input) ||
               needs.counterparts.count(input) != 0 || from_target_side) {
      return Status::Unavailable("input '" + input + "' could not be fetched");
    }
  }
  return feeds;
}

// The target's graph, parsed at the first node cut out of it and kept for the others.
class TargetCutter {
 public:
  explicit TargetCutter(const std::filesystem::path& path) : path_(path) {}

  const std::filesystem::path& path() const { return path_; }
  Result<std::string> Cut(const std::vector<size_t>& unit, const TensorMap& feeds,
                          const std::string& weights_location) {
    CONVGATE_RETURN_IF_ERROR(Open());
    return cutter_->Cut(unit, feeds, weights_location);
  }
  Result<std::string> CutSideBySide(const std::vector<std::vector<size_t>>& units,
                                    const TensorMap& feeds, const std::string& weights_location) {
    CONVGATE_RETURN_IF_ERROR(Open());
    return cutter_->CutSideBySide(units, feeds, weights_location);
  }
  int64_t InitializerBytes(const std::vector<size_t>& unit) {
    return Open().ok() ? cutter_->InitializerBytes(unit) : 0;
  }

 private:
  Status Open() {
    if (!opened_) {
      opened_ = true;
      Result<graph::NodeModelCutter> cutter = graph::NodeModelCutter::Open(path_);
      if (cutter.ok()) cutter_ = std::move(cutter).value();
      if (!cutter.ok()) open_error_ = cutter.status();
    }
    return cutter_ ? Status::OK() : open_error_;
  }

  std::filesystem::path path_;
  bool opened_ = false;
  std::optional<graph::NodeModelCutter> cutter_;
  Status open_error_;
};

// A cut model, given the name its weights may be read from beside it ("" to carry them).
using CutFn = std::function<Result<std::string>(const std::string& weights_location)>;

// Writes a cut model, loads it with the target's backend, runs it on `feeds` for `names`. When
// the backend reads external data and the target file can be linked into the cut's folder, the
// cut references its weights in that file instead of carrying a copy: nothing is copied, written
// or parsed twice per cut (resnet18: 46 MB over five cuts).
Result<TensorMap> RunCut(const PerNodeContext& context, TargetCutter& cutter, const CutFn& cut,
                         const TensorMap& feeds, const std::vector<std::string>& names) {
  // A private folder rather than a file in /tmp: nobody can plant a file at its name, and it goes
  // even when convgate is killed (temp_dir.h).
  CONVGATE_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("node"));
  std::string weights_location;
  if (context.target.backend->ReadsExternalData() &&
      LinkScratchFile(dir.path() / "target.onnx", cutter.path()).ok()) {
    weights_location = "target.onnx";
  }
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, cut(weights_location));
  const std::filesystem::path path = dir.path() / "node.onnx";
  CONVGATE_RETURN_IF_ERROR(WriteScratchFile(path, bytes));
  bytes = std::string();  // the backend reads the file; the weights are not held twice more
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<backends::Model> model,
                            context.target.backend->Load(path, context.target_load));
  return model->Run(feeds, names);
}

// Runs one node (its unit) alone on `feeds`.
Result<TensorMap> RunAlone(const PerNodeContext& context, TargetCutter& cutter,
                           const NodeCheck& node, const std::vector<size_t>& unit,
                           const TensorMap& feeds) {
  const CutFn cut = [&](const std::string& location) { return cutter.Cut(unit, feeds, location); };
  return RunCut(context, cutter, cut, feeds, {node.TargetTensor()});
}

// One node's re-run: the error it adds alone, once its feeds are gathered and it has run.
struct AloneRun {
  size_t node = 0;  // index into PerNodeReport::nodes
  std::vector<size_t> unit;
  LocalError local;
  Result<TensorMap> feeds = TensorMap();
  const Tensor* reference = nullptr;  // the source's value of the node's tensor
  Result<TensorMap> outputs = Status::Unavailable("the source tensor could not be fetched");

  bool runnable() const { return feeds.ok() && reference != nullptr; }
};

AloneRun PrepareOne(const PerNodeContext& context, int sample_idx, const LocalNeeds& needs,
                    const TensorMap& from_source, const TensorMap& from_target,
                    const PerNodeReport& report) {
  const NodeCheck& node = report.nodes[needs.node];
  AloneRun run;
  run.node = needs.node;
  run.unit = needs.unit;
  run.local.sample = sample_idx;
  for (size_t idx : needs.unit) {
    if (idx == static_cast<size_t>(node.node_index)) continue;
    const graph::NodeInfo& info = context.target_nodes[idx];
    run.local.run_with.push_back(info.name.empty() ? info.op_type : info.name);
  }
  const TensorMap& sample = (*context.samples)[sample_idx];
  run.reference = from_source.Find(node.tensor);
  run.feeds = FeedsOf(context, sample, from_source, from_target, needs, run.local);
  if (!run.feeds.ok()) run.outputs = run.feeds.status();
  return run;
}

// Significand digits and smallest normal exponent of a floating dtype.
struct FloatFormat {
  int digits = 0;
  int min_exponent = 0;
};

std::optional<FloatFormat> FormatOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return FloatFormat{11, -14};
    case DType::kBFloat16:
      return FloatFormat{8, -126};
    case DType::kFloat32:
      return FloatFormat{24, -126};
    case DType::kFloat64:
      return FloatFormat{53, -1022};
    default:
      return std::nullopt;
  }
}

// Half the spacing of `format`'s numbers around `value`: the most rounding to it can move it.
double HalfUlp(double value, const FloatFormat& format) {
  int exponent = 0;
  if (value != 0.0) std::frexp(std::abs(value), &exponent);  // |value| = m * 2^exponent
  const int binade =
      value == 0.0 ? format.min_exponent : std::max(exponent - 1, format.min_exponent);
  return std::ldexp(1.0, binade - format.digits);
}

// The narrowest floating dtype among the node's fed inputs and its output: the rounding the node
// cannot do better than. nullopt when its output is not floating.
std::optional<DType> RoundingDType(const TensorMap& feeds, const Tensor& output) {
  if (!FormatOf(output.dtype())) return std::nullopt;
  DType narrowest = output.dtype();
  for (const TensorMap::Entry& entry : feeds) {
    const std::optional<FloatFormat> format = FormatOf(entry.tensor.dtype());
    if (format && format->digits < FormatOf(narrowest)->digits) narrowest = entry.tensor.dtype();
  }
  return narrowest;
}

// Whether every element of `alone` is within half an ulp of `dtype` of the source's value (equal
// NaN or Inf included): the node computes the source's value as exactly as `dtype` can hold it.
bool WithinRounding(const Tensor& source, const Tensor& alone, DType dtype) {
  const std::optional<FloatFormat> format = FormatOf(dtype);
  if (!format || !IsFloating(source.dtype()) || !IsFloating(alone.dtype()) ||
      source.num_elements() != alone.num_elements()) {
    return false;
  }
  for (int64_t flat = 0; flat < source.num_elements(); ++flat) {
    const double expected = source.GetDouble(flat);
    const double actual = alone.GetDouble(flat);
    if (expected == actual || (std::isnan(expected) && std::isnan(actual))) continue;
    if (!std::isfinite(expected) || !std::isfinite(actual)) return false;
    if (std::abs(actual - expected) > HalfUlp(expected, *format)) return false;
  }
  return true;
}

void FinishOne(const PerNodeContext& context, AloneRun& run, PerNodeReport& report) {
  NodeCheck& node = report.nodes[run.node];
  LocalError& local = run.local;
  ++report.runs;  // one run of the node alone, whether or not it shared a session
  const Tensor* alone = run.outputs.ok() ? run.outputs->Find(node.TargetTensor()) : nullptr;
  if (alone == nullptr) {
    local.error = run.outputs.ok() ? "the node alone did not produce '" + node.TargetTensor() + "'"
                                   : run.outputs.status().ToString();
  } else {
    local.computed = true;
    local.result = CompareNodeTensor(local.sample, node.tensor, *run.reference, *alone,
                                     *context.policy, context.FloorOf(node.tensor));
    if (const std::optional<DType> rounding = RoundingDType(*run.feeds, *alone)) {
      local.rounding_dtype = std::string(DTypeName(*rounding));
      local.within_rounding = WithinRounding(*run.reference, *alone, *rounding);
    }
  }
  node.local = std::move(local);
  run.outputs = TensorMap();  // judged; its memory is not held while later batches run
}

// Runs `batch` (runnable nodes) side by side in one session. False when that model cannot be
// built, loaded or run (then each node runs in a session of its own, for its own result or
// message).
bool RunSideBySide(const PerNodeContext& context, TargetCutter& cutter,
                   std::vector<AloneRun*>& batch, const PerNodeReport& report) {
  std::vector<std::vector<size_t>> units;
  std::vector<std::string> names;
  TensorMap feeds;
  for (size_t copy_idx = 0; copy_idx < batch.size(); ++copy_idx) {
    const NodeCheck& node = report.nodes[batch[copy_idx]->node];
    units.push_back(batch[copy_idx]->unit);
    names.push_back(graph::SideBySideOutputName(copy_idx, node.TargetTensor()));
    // The same name is the same fetched tensor for every node (FeedsOf).
    for (const TensorMap::Entry& entry : *batch[copy_idx]->feeds) {
      if (!feeds.Contains(entry.name)) feeds.InsertOrAssign(entry.name, ViewOf(entry.tensor));
    }
  }
  const CutFn cut = [&](const std::string& location) {
    return cutter.CutSideBySide(units, feeds, location);
  };
  Result<TensorMap> outputs = RunCut(context, cutter, cut, feeds, names);
  if (!outputs.ok()) return false;
  for (size_t copy_idx = 0; copy_idx < batch.size(); ++copy_idx) {
    Tensor* tensor = outputs->Find(names[copy_idx]);
    if (tensor == nullptr) return false;
    TensorMap alone;
    alone.InsertOrAssign(report.nodes[batch[copy_idx]->node].TargetTensor(), std::move(*tensor));
    batch[copy_idx]->outputs = std::move(alone);
  }
  return true;
}

// Splits the runnable nodes into batches whose copied weights stay within a quarter of the
// budget: a side-by-side model holds them several times while it is cut, written and loaded.
std::vector<std::vector<AloneRun*>> Batches(const PerNodeContext& context, TargetCutter& cutter,
                                            std::vector<AloneRun>& runs,
                                            const PerNodeReport& report) {
  std::vector<AloneRun*> runnable;
  std::vector<int64_t> weights;
  for (AloneRun& run : runs) {
    if (!run.runnable()) continue;
    runnable.push_back(&run);
    weights.push_back(cutter.InitializerBytes(run.unit));
  }
  std::vector<std::vector<AloneRun*>> batches;
  for (const std::vector<size_t>& planned : PlanChunks(weights, context.budget / 4)) {
    batches.emplace_back();
    for (size_t idx : planned) batches.back().push_back(runnable[idx]);
  }
  return batches;
}

// Every node of a chunk run alone on its own inputs, side by side with others in as few sessions
// as the budget allows, and judged; each batch's outputs are released before the next runs.
void RunChunkAlone(const PerNodeContext& context, TargetCutter& cutter, std::vector<AloneRun>& runs,
                   PerNodeReport& report) {
  for (std::vector<AloneRun*>& batch : Batches(context, cutter, runs, report)) {
    if (batch.size() == 1 || !RunSideBySide(context, cutter, batch, report)) {
      for (AloneRun* run : batch) {
        run->outputs = RunAlone(context, cutter, report.nodes[run->node], run->unit, *run->feeds);
      }
    }
    for (AloneRun* run : batch) FinishOne(context, *run, report);
  }
  for (AloneRun& run : runs) {
    if (!run.runnable()) FinishOne(context, run, report);
  }
}

// Removes the (moved-from) tensors `taken` from `kept`.
void DropTaken(const std::set<std::string>& taken, TensorMap& kept) {
  TensorMap rest;
  for (auto& entry : kept) {
    if (taken.count(entry.name) == 0) rest.InsertOrAssign(entry.name, std::move(entry.tensor));
  }
  kept = std::move(rest);
}

// Several nodes' needs fetched by one run of each side, within the budget.
void ComputeChunk(PerNodeContext& context, TargetCutter& cutter, int sample_idx,
                  const std::vector<LocalNeeds>& group, const std::vector<size_t>& chunk,
                  PerNodeReport& report) {
  std::vector<std::string> source_names, target_names;
  std::set<std::string> seen;
  TensorMap from_source, from_target;
  TensorMap* kept = static_cast<size_t>(sample_idx) < context.last_source_chunk.size()
                        ? &context.last_source_chunk[sample_idx]
                        : nullptr;
  std::set<std::string> taken;
  for (size_t idx : chunk) {
    for (const std::string& name : group[idx].from_source) {
      if (!seen.insert(name).second) continue;
      if (Tensor* tensor = kept ? kept->Find(name) : nullptr) {
        from_source.InsertOrAssign(name, std::move(*tensor));  // what the source gave before
        taken.insert(name);
      } else {
        source_names.push_back(name);
      }
    }
    for (const std::string& name : group[idx].from_target) {
      if (seen.insert("target:" + name).second) target_names.push_back(name);
    }
  }
  if (!taken.empty()) DropTaken(taken, *kept);
  const TensorMap& sample = (*context.samples)[sample_idx];
  std::map<std::string, std::string> errors;
  FetchTensors(*context.source.model, sample, source_names, from_source, errors, report.runs);
  FetchTensors(*context.target.model,
               SampleFor(context.target, *context.samples, static_cast<size_t>(sample_idx)),
               target_names, from_target, errors, report.runs);
  // The one-node models run beside the fetched tensors and the parsed graph, not the sessions.
  ReleaseSide(context.source);
  ReleaseSide(context.target);
  std::vector<AloneRun> runs;
  for (size_t idx : chunk) {
    runs.push_back(PrepareOne(context, sample_idx, group[idx], from_source, from_target, report));
  }
  RunChunkAlone(context, cutter, runs, report);
}

bool Selected(const NodeCheck& node, LocalErrorMode mode) {
  if (node.status == NodeStatus::kErrored) return false;
  return mode == LocalErrorMode::kAll || node.status == NodeStatus::kFailed;
}

}  // namespace

Result<Tensor> CastFloat(const Tensor& tensor, DType to) {
  CONVGATE_ASSIGN_OR_RETURN(Tensor cast, Tensor::Allocate(to, tensor.shape()));
  for (int64_t flat = 0; flat < tensor.num_elements(); ++flat) {
    cast.SetDouble(flat, tensor.GetDouble(flat));
  }
  return cast;
}

void ComputeLocalErrors(PerNodeContext& context, LocalErrorMode mode, PerNodeReport& report) {
  if (mode == LocalErrorMode::kNone) {
    context.last_source_chunk.clear();
    return;
  }
  // Each node is re-run on the sample where it first failed (sample 0 when it did not fail).
  std::map<int, std::vector<LocalNeeds>> by_sample;
  for (size_t node_idx = 0; node_idx < report.nodes.size(); ++node_idx) {
    const NodeCheck& node = report.nodes[node_idx];
    if (!Selected(node, mode)) continue;
    const int sample_idx = std::max(node.first_failing_sample, 0);
    by_sample[sample_idx].push_back(
        NeedsOf(context, (*context.samples)[sample_idx], node, node_idx));
  }
  TargetCutter cutter(context.target.path);
  for (const auto& [sample_idx, group] : by_sample) {
    std::vector<int64_t> costs;
    for (const LocalNeeds& needs : group) {
      int64_t bytes = 0;
      for (const auto& name : needs.from_source) bytes += context.SizeOf(name);
      for (const auto& name : needs.from_target) bytes += context.SizeOf(name);
      costs.push_back(bytes);
    }
    for (const std::vector<size_t>& chunk : PlanChunks(costs, context.budget)) {
      ComputeChunk(context, cutter, sample_idx, group, chunk, report);
    }
  }
}

}  // namespace convgate::gate::internal
