// Local versus inherited error: a target node run alone on the source's tensors for its inputs
// shows the error that node adds by itself. A node downstream of a broken one fails the ordinary
// comparison (its inputs already differ) but passes here; the broken node fails both.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"
#include "convgate/graph/node_model.h"
#include "gate/per_node/run.h"

namespace convgate::gate::internal {
namespace {

// What one node needs fetched: its inputs from the source (or, lacking a source counterpart, from
// the target) and its output from the source, as the reference.
struct LocalNeeds {
  size_t node = 0;  // index into PerNodeReport::nodes
  std::vector<std::string> from_source;
  std::vector<std::string> from_target;
};

LocalNeeds NeedsOf(const PerNodeContext& context, const TensorMap& sample, const NodeCheck& node,
                   size_t node_idx) {
  LocalNeeds needs;
  needs.node = node_idx;
  needs.from_source.push_back(node.tensor);
  std::set<std::string> seen;
  for (const std::string& input : node.inputs) {
    if (input.empty() || sample.Contains(input) || !seen.insert(input).second) continue;
    if (context.source_produced.count(input) != 0) {
      needs.from_source.push_back(input);
    } else if (context.target_produced.count(input) != 0) {
      needs.from_target.push_back(input);
    }  // otherwise an initializer, which the one-node model carries
  }
  return needs;
}

// The feeds of the one-node model: graph inputs from the sample, the rest as fetched.
Result<TensorMap> FeedsOf(const NodeCheck& node, const TensorMap& sample,
                          const TensorMap& from_source, const TensorMap& from_target,
                          const LocalNeeds& needs, LocalError& local) {
  TensorMap feeds;
  for (const std::string& input : node.inputs) {
    if (input.empty() || feeds.Contains(input)) continue;
    const Tensor* tensor = sample.Find(input);
    if (tensor == nullptr) tensor = from_source.Find(input);
    if (tensor != nullptr) local.inputs_from_source.push_back(input);
    const bool from_target_side =
        tensor == nullptr && std::count(needs.from_target.begin(), needs.from_target.end(), input);
    if (from_target_side) {
      tensor = from_target.Find(input);
      local.inputs_from_target.push_back(input);
    }
    if (tensor != nullptr) {
      CONVGATE_RETURN_IF_ERROR(feeds.Insert(input, tensor->Clone()));
    } else if (std::count(needs.from_source.begin(), needs.from_source.end(), input) ||
               from_target_side) {
      return Status::Unavailable("input '" + input + "' could not be fetched");
    }
  }
  return feeds;
}

// The target's graph, parsed at the first node cut out of it and kept for the others.
class TargetCutter {
 public:
  explicit TargetCutter(const std::filesystem::path& path) : path_(path) {}

  Result<std::string> Cut(size_t node_index, const TensorMap& feeds) {
    if (!opened_) {
      opened_ = true;
      Result<graph::NodeModelCutter> cutter = graph::NodeModelCutter::Open(path_);
      if (cutter.ok()) cutter_ = std::move(cutter).value();
      if (!cutter.ok()) open_error_ = cutter.status();
    }
    if (!cutter_) return open_error_;
    return cutter_->Cut(node_index, feeds);
  }

 private:
  std::filesystem::path path_;
  bool opened_ = false;
  std::optional<graph::NodeModelCutter> cutter_;
  Status open_error_;
};

// Writes the one-node model, loads it with the target's backend, runs it on `feeds`.
Result<TensorMap> RunAlone(const PerNodeContext& context, TargetCutter& cutter,
                           const NodeCheck& node, const TensorMap& feeds) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, cutter.Cut(node.node_index, feeds));
  // A private folder rather than a file in /tmp: nobody can plant a file at its name, and it goes
  // even when convgate is killed (temp_dir.h).
  CONVGATE_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("node"));
  const std::filesystem::path path = dir.path() / "node.onnx";
  CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(path, bytes));
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<backends::Model> model,
                            context.target.backend->Load(path, context.target_load));
  return model->Run(feeds, {node.tensor});
}

void ComputeOne(const PerNodeContext& context, TargetCutter& cutter, int sample_idx,
                const LocalNeeds& needs, const TensorMap& from_source, const TensorMap& from_target,
                PerNodeReport& report) {
  NodeCheck& node = report.nodes[needs.node];
  LocalError local;
  local.sample = sample_idx;
  const TensorMap& sample = (*context.samples)[sample_idx];
  const Tensor* reference = from_source.Find(node.tensor);
  Result<TensorMap> feeds = FeedsOf(node, sample, from_source, from_target, needs, local);
  Result<TensorMap> outputs = Status::Unavailable("the source tensor could not be fetched");
  if (!feeds.ok()) outputs = feeds.status();
  if (feeds.ok() && reference != nullptr) outputs = RunAlone(context, cutter, node, *feeds);
  ++report.runs;
  const Tensor* alone = outputs.ok() ? outputs->Find(node.tensor) : nullptr;
  if (alone == nullptr) {
    local.error = outputs.ok() ? "the node alone did not produce '" + node.tensor + "'"
                               : outputs.status().ToString();
  } else {
    local.computed = true;
    local.result = CompareNodeTensor(sample_idx, node.tensor, *reference, *alone, *context.policy);
  }
  node.local = std::move(local);
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
  FetchTensors(*context.target.model, sample, target_names, from_target, errors, report.runs);
  // The one-node models run beside the fetched tensors and the parsed graph, not the sessions.
  ReleaseSide(context.source);
  ReleaseSide(context.target);
  for (size_t idx : chunk) {
    ComputeOne(context, cutter, sample_idx, group[idx], from_source, from_target, report);
  }
}

bool Selected(const NodeCheck& node, LocalErrorMode mode) {
  if (node.status == NodeStatus::kErrored) return false;
  return mode == LocalErrorMode::kAll || node.status == NodeStatus::kFailed;
}

}  // namespace

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
