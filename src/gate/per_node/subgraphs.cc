// Expanding If/Loop/Scan bodies into the main graph before per-node validation (subgraphs.h).
#include "gate/per_node/subgraphs.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"
#include "convgate/graph/openvino_ir.h"
#include "convgate/graph/subgraph_expand.h"

namespace convgate::gate::internal {
namespace {

// Deep nesting is unwrapped one level per round; past this many levels the rest stays whole.
constexpr int kMaxRounds = 16;

using Probes = std::vector<TensorMap>;  // per sample: the probed values

// The one element of a probed value, as a number.
Result<double> ScalarOf(const Probes& probes, size_t sample, const std::string& name) {
  const Tensor* tensor = probes[sample].Find(name);
  if (tensor == nullptr) return Status::Unavailable("'" + name + "' could not be fetched");
  if (tensor->num_elements() != 1 || tensor->dtype() == DType::kString) {
    return Status::Unavailable("'" + name + "' is " + tensor->Describe() + ", not one number");
  }
  return tensor->GetDouble(0);
}

// The dim along `axis` (negative counts from the end) of a probed value.
Result<int64_t> DimOf(const Probes& probes, size_t sample, const std::string& name, int axis) {
  const Tensor* tensor = probes[sample].Find(name);
  if (tensor == nullptr) return Status::Unavailable("'" + name + "' could not be fetched");
  const std::vector<int64_t>& dims = tensor->shape().dims();
  const int rank = static_cast<int>(dims.size());
  const int resolved = axis < 0 ? axis + rank : axis;
  if (resolved < 0 || resolved >= rank) {
    return Status::Unavailable("'" + name + "' is " + tensor->Describe() + ", without axis " +
                               std::to_string(axis));
  }
  return dims[resolved];
}

// If: 1 for the then branch, 0 for the else branch.
Result<int64_t> DecideIf(const graph::SubgraphSite& site, const Probes& probes, size_t sample) {
  Result<double> condition = ScalarOf(probes, sample, site.condition);
  if (!condition.ok()) {
    return Status::Unavailable("condition not computable: " + condition.status().message());
  }
  return *condition != 0.0 ? 1 : 0;
}

// Loop and Scan: the iteration count.
Result<int64_t> DecideIterations(const graph::SubgraphSite& site, const Probes& probes,
                                 size_t sample) {
  if (site.op_type == "Scan") {
    Result<int64_t> length = DimOf(probes, sample, site.counted_by, site.scan_axis);
    if (!length.ok()) return Status::Unavailable("length unknown: " + length.status().message());
    return *length;
  }
  if (!site.condition.empty()) {
    Result<double> condition = ScalarOf(probes, sample, site.condition);
    if (!condition.ok()) {
      return Status::Unavailable("initial condition not computable: " +
                                 condition.status().message());
    }
    if (*condition == 0.0) return 0;
  }
  if (site.loop_runs_trip_count && !site.trip_count.empty()) {
    Result<double> trip_count = ScalarOf(probes, sample, site.trip_count);
    if (!trip_count.ok()) {
      return Status::Unavailable("trip count unknown: " + trip_count.status().message());
    }
    return static_cast<int64_t>(*trip_count);
  }
  if (!site.counted_by.empty()) {
    Result<int64_t> ran = DimOf(probes, sample, site.counted_by, 0);
    if (!ran.ok()) return Status::Unavailable("trip count unknown: " + ran.status().message());
    return *ran;
  }
  return Status::Unavailable(
      "trip count unknown: the body computes its own stopping condition and the Loop has no scan "
      "output counting the iterations that ran");
}

std::string DecisionText(const graph::SubgraphSite& site, int64_t decision) {
  if (site.op_type == "If") return decision == 1 ? "then_branch" : "else_branch";
  return std::to_string(decision) + (decision == 1 ? " iteration" : " iterations");
}

// One decision for every sample, or why there is none.
Result<int64_t> Decide(const graph::SubgraphSite& site, const Probes& probes) {
  if (!site.unsupported.empty()) return Status::Unimplemented(site.unsupported);
  int64_t first = 0;
  for (size_t sample = 0; sample < probes.size(); ++sample) {
    Result<int64_t> decision = site.op_type == "If" ? DecideIf(site, probes, sample)
                                                    : DecideIterations(site, probes, sample);
    if (!decision.ok()) return decision.status();
    if (sample == 0) first = *decision;
    if (*decision != first) {
      return Status::FailedPrecondition(
          "the samples disagree: sample 0 runs " + DecisionText(site, first) + ", sample " +
          std::to_string(sample) + " " + DecisionText(site, *decision) +
          " (one expanded model serves every sample; compare them separately)");
    }
  }
  if (site.op_type != "If" && first < 1) {
    return Status::FailedPrecondition("runs no iteration for these inputs");
  }
  if (site.op_type != "If" && first > kMaxUnrolledIterations) {
    return Status::FailedPrecondition("budget: " + std::to_string(first) +
                                      " iterations exceed the unroll limit of " +
                                      std::to_string(kMaxUnrolledIterations));
  }
  return first;
}

std::vector<std::string> ValuesOf(const graph::SubgraphSite& site, const std::string& body) {
  for (const auto& [name, values] : site.body_values) {
    if (name == body) return values;
  }
  return {};
}

// Every value of the site's bodies, unmatched for `reason`.
void AllUnmatched(const graph::SubgraphSite& site, const std::string& reason,
                  SubgraphCheck& check) {
  for (const auto& [body, values] : site.body_values) {
    for (const std::string& value : values) check.unmatched.push_back({value, reason});
  }
}

// The probed values of every sample, fetched by one run per sample.
Probes Probe(backends::Model& model, const std::vector<graph::SubgraphSite>& sites,
             const std::vector<TensorMap>& samples, int& runs) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const graph::SubgraphSite& site : sites) {
    for (const std::string* name : {&site.condition, &site.trip_count, &site.counted_by}) {
      if (!name->empty() && seen.insert(*name).second) names.push_back(*name);
    }
  }
  Probes probes(samples.size());
  for (size_t sample = 0; sample < samples.size(); ++sample) {
    std::map<std::string, std::string> errors;
    for (const std::string& name : names) {
      if (samples[sample].Contains(name)) {
        (void)probes[sample].Insert(name, samples[sample].Find(name)->Clone());
      }
    }
    std::vector<std::string> fetch;
    for (const std::string& name : names) {
      if (!probes[sample].Contains(name)) fetch.push_back(name);
    }
    FetchTensors(model, samples[sample], fetch, probes[sample], errors, runs);
  }
  return probes;
}

// One side's rounds of expansion.
class SideExpander {
 public:
  SideExpander(const PerNodeSide& side, const backends::LoadOptions& load,
               const std::vector<TensorMap>& samples, const compare::Policy& policy,
               const std::filesystem::path& dir)
      : side_(side), load_(load), samples_(samples), policy_(policy), dir_(dir) {}

  // Expands what it can; the side to run per-node on is side() afterwards.
  Status Run(int& runs) {
    // An OpenVINO IR has no ONNX bodies to expand (OpenVINO inlines what it can on conversion).
    if (graph::IsOpenVinoIr(side_.path)) return Status::OK();
    CONVGATE_ASSIGN_OR_RETURN(std::vector<graph::SubgraphSite> sites,
                              graph::ListSubgraphSitesInFile(side_.path));
    if (sites.empty()) return Status::OK();
    CONVGATE_ASSIGN_OR_RETURN(bytes_, ReadFile(side_.path));
    path_ = side_.path;
    // What an expanded model must still compute (first sample).
    ++runs;
    Result<TensorMap> reference = side_.model->Run(samples_.front(), {});
    if (reference.ok()) reference_ = std::move(reference).value();
    for (int round = 0; round < kMaxRounds; ++round) {
      if (round > 0) {
        CONVGATE_ASSIGN_OR_RETURN(sites, graph::ListSubgraphSites(bytes_, path_));
      }
      std::vector<graph::SubgraphSite> pending;
      for (graph::SubgraphSite& site : sites) {
        if (decided_.insert(site.node).second) pending.push_back(std::move(site));
      }
      if (pending.empty()) break;
      if (!ExpandRound(pending, round, runs)) break;
    }
    // Nodes past the last round (nesting deeper than kMaxRounds) are named too.
    CONVGATE_ASSIGN_OR_RETURN(sites, graph::ListSubgraphSites(bytes_, path_));
    for (const graph::SubgraphSite& site : sites) {
      if (decided_.insert(site.node).second) {
        Record(site, "nested deeper than " + std::to_string(kMaxRounds) + " levels");
      }
    }
    bytes_ = std::string();
    reference_ = TensorMap();
    return Status::OK();
  }

  PerNodeSide side() const {
    PerNodeSide side = side_;
    if (model_) {
      side.model = model_.get();
      side.path = path_;
    }
    return side;
  }
  std::vector<SubgraphCheck>& checks() { return checks_; }
  // The values an expanded node's body added, by the node's index in checks().
  const std::map<size_t, std::vector<std::string>>& values() const { return values_; }

 private:
  // Probes, decides and expands the pending sites; false when nothing more can be expanded.
  bool ExpandRound(const std::vector<graph::SubgraphSite>& pending, int round, int& runs) {
    backends::Model& current = model_ ? *model_ : *side_.model;
    const Probes probes = Probe(current, pending, samples_, runs);
    std::vector<graph::SiteExpansion> expansions;
    std::map<size_t, size_t> check_of;  // node index -> index into checks_
    for (const graph::SubgraphSite& site : pending) {
      Result<int64_t> decision = Decide(site, probes);
      int64_t added = 0;
      if (decision.ok() && site.op_type != "If") {
        for (const auto& [body, values] : site.body_values) added += values.size() * *decision;
      }
      if (decision.ok() && unrolled_values_ + added > kMaxUnrolledValues) {
        decision = Status::FailedPrecondition("budget: unrolling " + DecisionText(site, *decision) +
                                              " would add " + std::to_string(added) +
                                              " values, past the limit of " +
                                              std::to_string(kMaxUnrolledValues) + " per model");
      }
      if (!decision.ok()) {
        Record(site, decision.status().message());
        continue;
      }
      unrolled_values_ += added;
      graph::SiteExpansion expansion;
      expansion.node_index = site.node_index;
      expansion.then_branch = *decision == 1;
      expansion.iterations = *decision;
      expansions.push_back(expansion);
      check_of[site.node_index] = Record(site, "");
      SubgraphCheck& check = checks_.back();
      check.expanded = true;
      check.expansion = DecisionText(site, *decision);
      if (site.op_type == "If") {
        check.not_taken = static_cast<int64_t>(
            ValuesOf(site, *decision == 1 ? "else_branch" : "then_branch").size());
      }
    }
    if (expansions.empty()) return false;
    Status loaded = LoadExpanded(expansions, check_of, round, runs);
    if (loaded.ok()) return true;
    // The model as it was stays; the nodes of this round are reported with the reason.
    for (const auto& [node_index, check_idx] : check_of) {
      SubgraphCheck& check = checks_[check_idx];
      check.expanded = false;
      check.reason = check.expansion + ": " + loaded.message();
      check.expansion.clear();
      check.not_taken = 0;
      for (const graph::SubgraphSite& site : pending) {
        if (site.node_index == node_index) AllUnmatched(site, check.reason, check);
      }
      values_.erase(check_idx);
    }
    return false;
  }

  // The expanded model's outputs against the original's on the first sample: an expansion that
  // changed what the model computes would make every body comparison meaningless.
  Status Verify(backends::Model& model, int& runs) {
    ++runs;
    Result<TensorMap> outputs = model.Run(samples_.front(), {});
    if (!outputs.ok()) {
      return Status::Unavailable("the expanded model does not run: " + outputs.status().message());
    }
    for (const auto& entry : reference_) {
      const Tensor* expanded = outputs->Find(entry.name);
      if (expanded == nullptr) {
        return Status::Internal("the expanded model lacks output '" + entry.name + "'");
      }
      const NodeSampleResult result =
          CompareNodeTensor(0, entry.name, entry.tensor, *expanded, policy_);
      if (!result.passed) {
        return Status::Internal("the expanded model's output '" + entry.name +
                                "' differs from the model's (max |diff| " +
                                std::to_string(result.max_abs_error) + ")");
      }
    }
    return Status::OK();
  }

  Status LoadExpanded(const std::vector<graph::SiteExpansion>& expansions,
                      const std::map<size_t, size_t>& check_of, int round, int& runs) {
    Result<graph::ExpandedModel> expanded = graph::ExpandSubgraphs(bytes_, expansions, path_);
    if (!expanded.ok()) return Status::Internal("expansion failed: " + expanded.status().message());
    const std::filesystem::path path =
        dir_ / (side_.role + "_expanded_" + std::to_string(round) + ".onnx");
    CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(path, expanded->bytes));
    // The previous model goes first: its session and the new one are never held at once.
    const bool first = !model_;
    model_.reset();
    if (first) ReleaseSide(side_);
    Result<std::unique_ptr<backends::Model>> model = side_.backend->Load(path, load_);
    Status works =
        model.ok() ? Verify(**model, runs)
                   : Status::Unavailable("the expanded model does not load in " +
                                         side_.backend->name() + ": " + model.status().message());
    if (!works.ok()) {
      model = works;
      if (!first) {
        Result<std::unique_ptr<backends::Model>> again = side_.backend->Load(path_, load_);
        if (again.ok()) model_ = std::move(again).value();
      }
      return works;
    }
    model_ = std::move(model).value();
    bytes_ = std::move(expanded->bytes);
    path_ = path;
    for (const auto& [node_index, check_idx] : check_of) {
      values_[check_idx] = expanded->values[node_index];
      for (const std::string& nested : expanded->nested[node_index]) {
        parent_of_[nested] = checks_[check_idx].node;
      }
    }
    return Status::OK();
  }

  // Adds the site's check; `reason` non-empty marks it not expanded. Returns its index.
  size_t Record(const graph::SubgraphSite& site, const std::string& reason) {
    SubgraphCheck check;
    check.side = side_.role;
    check.node = site.node;
    check.op_type = site.op_type;
    auto parent = parent_of_.find(site.node);
    if (parent != parent_of_.end()) check.parent = parent->second;
    check.reason = reason;
    if (!reason.empty()) AllUnmatched(site, reason, check);
    checks_.push_back(std::move(check));
    return checks_.size() - 1;
  }

  PerNodeSide side_;
  backends::LoadOptions load_;
  const std::vector<TensorMap>& samples_;
  const compare::Policy& policy_;
  std::filesystem::path dir_;
  TensorMap reference_;  // the model's outputs on the first sample
  std::string bytes_;
  std::filesystem::path path_;
  std::unique_ptr<backends::Model> model_;  // the latest expanded model
  std::set<std::string> decided_;
  std::map<std::string, std::string> parent_of_;
  std::map<size_t, std::vector<std::string>> values_;
  int64_t unrolled_values_ = 0;
  std::vector<SubgraphCheck> checks_;
};

// What the other side did with the node of the same name, for an unmatched value's reason.
std::string OtherSide(const std::vector<SubgraphCheck>& other, const SubgraphCheck& check) {
  for (const SubgraphCheck& candidate : other) {
    if (candidate.node != check.node) continue;
    if (!candidate.expanded)
      return "; the " + candidate.side + " did not expand it: " + candidate.reason;
    if (candidate.expansion != check.expansion) {
      return "; the " + candidate.side + " ran " + candidate.expansion;
    }
    return "";
  }
  return "; the " + std::string(check.side == "source" ? "target" : "source") +
         " has no node of this name";
}

// Sorts each expanded node's body values into matched and unmatched once per-node has run.
void Classify(SideExpander& side, const std::vector<SubgraphCheck>& other,
              const std::set<std::string>& compared) {
  for (const auto& [check_idx, values] : side.values()) {
    SubgraphCheck& check = side.checks()[check_idx];
    const std::string other_role = check.side == "source" ? "target" : "source";
    for (const std::string& value : values) {
      if (compared.count(value) != 0) {
        check.matched.push_back(value);
      } else {
        check.unmatched.push_back(
            {value, "the " + other_role + " has no value of this name" + OtherSide(other, check)});
      }
    }
  }
}

std::string SummaryNote(const std::vector<SubgraphCheck>& checks, const std::string& role) {
  int total = 0, expanded = 0;
  size_t matched = 0, unmatched = 0;
  for (const SubgraphCheck& check : checks) {
    if (check.side != role) continue;
    ++total;
    expanded += check.expanded ? 1 : 0;
    matched += check.matched.size();
    unmatched += check.unmatched.size();
  }
  if (total == 0) return "";
  return role + ": " + std::to_string(expanded) + " of " + std::to_string(total) +
         " If/Loop/Scan nodes expanded into the main graph for these inputs; their bodies' "
         "values: " +
         std::to_string(matched) + " compared, " + std::to_string(unmatched) +
         " not (report.subgraphs says why)";
}

}  // namespace

Result<PerNodeReport> RunPerNodeWithSubgraphs(
    const PerNodeSide& source, const backends::LoadOptions& source_load, const PerNodeSide& target,
    const backends::LoadOptions& target_load, const std::vector<TensorMap>& samples,
    const compare::Policy& policy, const PerNodeOptions& options) {
  if (samples.empty()) {
    return RunPerNode(source, source_load, target, target_load, samples, policy, options);
  }
  // Expanded models live in a private folder that goes with the run (temp_dir.h).
  CONVGATE_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("subgraphs"));
  SideExpander source_side(source, source_load, samples, policy, dir.path());
  SideExpander target_side(target, target_load, target.inputs ? *target.inputs : samples, policy,
                           dir.path());
  int runs = 0;
  CONVGATE_RETURN_IF_ERROR(source_side.Run(runs));
  CONVGATE_RETURN_IF_ERROR(target_side.Run(runs));
  CONVGATE_ASSIGN_OR_RETURN(PerNodeReport report,
                            RunPerNode(source_side.side(), source_load, target_side.side(),
                                       target_load, samples, policy, options));
  report.runs += runs;
  if (source_side.checks().empty() && target_side.checks().empty()) return report;
  std::set<std::string> compared;
  for (const NodeCheck& node : report.nodes) compared.insert(node.tensor);
  Classify(source_side, target_side.checks(), compared);
  Classify(target_side, source_side.checks(), compared);
  for (SideExpander* side : {&source_side, &target_side}) {
    for (SubgraphCheck& check : side->checks()) report.subgraphs.push_back(std::move(check));
  }
  for (const char* role : {"source", "target"}) {
    const std::string note = SummaryNote(report.subgraphs, role);
    if (!note.empty()) report.notes.push_back("subgraphs: " + note);
  }
  return report;
}

}  // namespace convgate::gate::internal
