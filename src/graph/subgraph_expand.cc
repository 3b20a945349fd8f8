// If/Loop/Scan expansion for per-node validation: bodies become main-graph nodes so their values
// can be marked as outputs (subgraph_expand.h).
#include "convgate/graph/subgraph_expand.h"

#include <algorithm>
#include <map>
#include <set>

#include "convgate/graph/internal/model_proto.h"
#include "graph/onnx_types.h"

namespace convgate::graph {
namespace {

bool IsSiteOp(const onnx::NodeProto& node) {
  return IsDefaultDomain(node) &&
         (node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan");
}

std::string SiteName(const onnx::NodeProto& node) {
  if (!node.name().empty()) return node.name();
  return node.output_size() > 0 ? node.output(0) : node.op_type();
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, std::string_view name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

const onnx::GraphProto* FindGraph(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute != nullptr && attribute->has_g() ? &attribute->g() : nullptr;
}

int64_t IntAt(const onnx::NodeProto& node, std::string_view name, size_t index, int64_t fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr || static_cast<int>(index) >= attribute->ints_size()) return fallback;
  return attribute->ints(static_cast<int>(index));
}

int64_t IntOf(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute == nullptr ? fallback : attribute->i();
}

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return 0;
}

// Every value a graph's nodes produce, nested bodies included, in file order.
void CollectProduced(const onnx::GraphProto& graph, std::vector<std::string>& out) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty()) out.push_back(output);
    }
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) CollectProduced(attribute.g(), out);
      for (const onnx::GraphProto& body : attribute.graphs()) CollectProduced(body, out);
    }
  }
}

// The Loop body's condition output is its condition input (directly or through Identity) or a
// Constant true: then the loop stops at its trip count only.
bool ConditionAlwaysTrue(const onnx::GraphProto& body) {
  if (body.input_size() < 2 || body.output_size() < 1) return false;
  std::string value = body.output(0).name();
  for (int hop = 0; hop < 8; ++hop) {
    if (value == body.input(1).name()) return true;
    const onnx::NodeProto* producer = nullptr;
    for (const onnx::NodeProto& node : body.node()) {
      for (const std::string& output : node.output()) {
        if (output == value) producer = &node;
      }
    }
    if (producer == nullptr) return false;
    if (producer->op_type() == "Identity" && producer->input_size() == 1) {
      value = producer->input(0);
      continue;
    }
    if (producer->op_type() != "Constant") return false;
    const onnx::AttributeProto* attribute = FindAttribute(*producer, "value");
    if (attribute == nullptr || !attribute->has_t()) return false;
    const onnx::TensorProto& tensor = attribute->t();
    if (tensor.data_type() != onnx::TensorProto::BOOL) return false;
    if (tensor.has_raw_data()) return tensor.raw_data().size() == 1 && tensor.raw_data()[0] != 0;
    return tensor.int32_data_size() == 1 && tensor.int32_data(0) != 0;
  }
  return false;
}

SubgraphSite SiteOf(const onnx::ModelProto& model, const onnx::NodeProto& node, size_t index) {
  SubgraphSite site;
  site.node_index = index;
  site.node = SiteName(node);
  site.op_type = node.op_type();
  for (const char* name : {"then_branch", "else_branch", "body"}) {
    if (const onnx::GraphProto* body = FindGraph(node, name)) {
      std::vector<std::string> values;
      CollectProduced(*body, values);
      site.body_values.emplace_back(name, std::move(values));
    }
  }
  if (site.op_type == "If") {
    if (!FindGraph(node, "then_branch") || !FindGraph(node, "else_branch")) {
      site.unsupported = "the If lacks a branch";
    }
    if (node.input_size() > 0) site.condition = node.input(0);
    return site;
  }
  const onnx::GraphProto* body = FindGraph(node, "body");
  if (body == nullptr) {
    site.unsupported = "the " + site.op_type + " has no body";
    return site;
  }
  if (site.op_type == "Loop") {
    if (node.input_size() > 0) site.trip_count = node.input(0);
    if (node.input_size() > 1) site.condition = node.input(1);
    site.loop_runs_trip_count = ConditionAlwaysTrue(*body);
    const int carried = node.input_size() - 2;
    const bool has_scan_output = node.output_size() > carried && carried >= 0;
    if (!site.loop_runs_trip_count && has_scan_output) {
      site.counted_by = node.output(carried);
    }
    return site;
  }
  if (DefaultOpset(model) < 9) {
    site.unsupported = "Scan before opset 9 (batched) is not unrolled";
    return site;
  }
  const int64_t scan_inputs = IntOf(node, "num_scan_inputs", 0);
  const int64_t states = node.input_size() - scan_inputs;
  if (scan_inputs < 1 || states < 0) {
    site.unsupported = "the Scan has no scan input";
    return site;
  }
  site.counted_by = node.input(static_cast<int>(states));
  site.scan_axis = static_cast<int>(IntAt(node, "scan_input_axes", 0, 0));
  return site;
}

// Every name the main graph already uses, so inlined names can avoid them.
std::set<std::string> UsedNames(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) {
    names.insert(node.output().begin(), node.output().end());
    if (!node.name().empty()) names.insert(node.name());
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) names.insert(tensor.name());
  for (const onnx::ValueInfoProto& info : graph.input()) names.insert(info.name());
  for (const onnx::ValueInfoProto& info : graph.output()) names.insert(info.name());
  return names;
}

// Renames references to `renamed` values inside a nested body (its nodes read outer values by
// name). ONNX names are unique across nested scopes, so a nested body's own values are never in
// the map.
void RenameReferences(onnx::GraphProto& graph, const std::map<std::string, std::string>& renamed) {
  auto rename = [&](std::string* name) {
    auto found = renamed.find(*name);
    if (found != renamed.end()) *name = found->second;
  };
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (std::string& input : *node.mutable_input()) rename(&input);
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) RenameReferences(*attribute.mutable_g(), renamed);
      for (onnx::GraphProto& body : *attribute.mutable_graphs()) RenameReferences(body, renamed);
    }
  }
  for (onnx::ValueInfoProto& output : *graph.mutable_output()) rename(output.mutable_name());
}

onnx::TensorProto ScalarTensor(const std::string& name, onnx::TensorProto::DataType type,
                               int64_t value, bool rank1) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(type);
  if (rank1) tensor.add_dims(1);
  if (type == onnx::TensorProto::BOOL) {
    tensor.add_int32_data(value != 0 ? 1 : 0);
  } else {
    tensor.add_int64_data(value);
  }
  return tensor;
}

bool DeclaredRank1(const onnx::ValueInfoProto& info) {
  return info.type().tensor_type().has_shape() && info.type().tensor_type().shape().dim_size() == 1;
}

// Builds the nodes and initializers that replace one site, in order.
class SiteBuilder {
 public:
  SiteBuilder(const onnx::NodeProto& site, int64_t opset, std::set<std::string>& used)
      : site_(site), name_(SiteName(site)), opset_(opset), used_(used) {}

  std::vector<onnx::NodeProto>& nodes() { return nodes_; }
  std::vector<onnx::TensorProto>& initializers() { return initializers_; }
  const std::vector<std::string>& values() const { return values_; }

  // Copies `body`'s nodes with its inputs bound to `bindings` (in order) and its values named
  // with `prefix` (or kept, when `prefix` is empty and nothing collides). Returns the names its
  // outputs have after the copy.
  std::vector<std::string> Inline(const onnx::GraphProto& body,
                                  const std::vector<std::string>& bindings, std::string prefix) {
    std::map<std::string, std::string> renamed;
    for (int idx = 0; idx < body.input_size() && idx < static_cast<int>(bindings.size()); ++idx) {
      renamed[body.input(idx).name()] = bindings[idx];
    }
    std::vector<std::string> local;
    for (const onnx::TensorProto& tensor : body.initializer()) local.push_back(tensor.name());
    for (const onnx::NodeProto& node : body.node()) {
      for (const std::string& output : node.output()) {
        if (!output.empty()) local.push_back(output);
      }
    }
    if (prefix.empty() && Collides(body, local)) prefix = fallback_prefix_;
    for (const std::string& name : local) renamed[name] = prefix + name;
    // A body's initializers are constants: every unrolled copy reads the first copy's, so the
    // weights are not duplicated once per iteration.
    for (const onnx::TensorProto& tensor : body.initializer()) {
      auto hoisted = hoisted_.find(tensor.name());
      if (hoisted != hoisted_.end()) {
        renamed[tensor.name()] = hoisted->second;
        continue;
      }
      hoisted_[tensor.name()] = renamed[tensor.name()];
      initializers_.push_back(tensor);
      initializers_.back().set_name(renamed[tensor.name()]);
      used_.insert(initializers_.back().name());
    }
    for (const onnx::NodeProto& node : body.node()) {
      onnx::NodeProto copy = node;
      if (!copy.name().empty()) copy.set_name(prefix + copy.name());
      RenameReferences(copy, renamed);
      used_.insert(copy.output().begin(), copy.output().end());
      for (const std::string& output : copy.output()) {
        if (!output.empty()) values_.push_back(output);
      }
      if (!copy.name().empty()) used_.insert(copy.name());
      nodes_.push_back(std::move(copy));
    }
    std::vector<std::string> outputs;
    for (const onnx::ValueInfoProto& output : body.output()) {
      auto found = renamed.find(output.name());
      outputs.push_back(found == renamed.end() ? output.name() : found->second);
    }
    return outputs;
  }

  void set_fallback_prefix(std::string prefix) { fallback_prefix_ = std::move(prefix); }

  // Identity from `value` to the site's output `index`.
  void Output(int index, const std::string& value) {
    if (index >= site_.output_size() || site_.output(index).empty()) return;
    onnx::NodeProto node;
    node.set_op_type("Identity");
    node.set_name(name_ + "/output_" + std::to_string(index));
    node.add_input(value);
    node.add_output(site_.output(index));
    nodes_.push_back(std::move(node));
  }

  std::string Constant(const std::string& name, onnx::TensorProto::DataType type, int64_t value,
                       bool rank1) {
    initializers_.push_back(ScalarTensor(name, type, value, rank1));
    used_.insert(name);
    return name;
  }

  // `parts` (one per iteration) stacked along a new `axis`, as the site's output `index`.
  void Stack(int index, const std::vector<std::string>& parts, int64_t axis) {
    if (index >= site_.output_size() || site_.output(index).empty()) return;
    const std::string base = name_ + "/output_" + std::to_string(index);
    std::string axes_name;
    if (opset_ >= 13) {
      onnx::TensorProto axes = ScalarTensor(base + "/axes", onnx::TensorProto::INT64, axis, true);
      initializers_.push_back(std::move(axes));
      axes_name = base + "/axes";
    }
    onnx::NodeProto concat;
    concat.set_op_type("Concat");
    concat.set_name(base + "/concat");
    AddInt(concat, "axis", axis);
    for (size_t part = 0; part < parts.size(); ++part) {
      onnx::NodeProto unsqueeze;
      unsqueeze.set_op_type("Unsqueeze");
      unsqueeze.set_name(base + "/unsqueeze_" + std::to_string(part));
      unsqueeze.add_input(parts[part]);
      if (opset_ >= 13) {
        unsqueeze.add_input(axes_name);
      } else {
        onnx::AttributeProto* axes = unsqueeze.add_attribute();
        axes->set_name("axes");
        axes->set_type(onnx::AttributeProto::INTS);
        axes->add_ints(axis);
      }
      unsqueeze.add_output(unsqueeze.name());
      concat.add_input(unsqueeze.name());
      nodes_.push_back(std::move(unsqueeze));
    }
    concat.add_output(site_.output(index));
    nodes_.push_back(std::move(concat));
  }

  // Gather(`value`, `index`) along `axis`: one slice of a scan input.
  std::string Slice(const std::string& value, int64_t index, int64_t axis,
                    const std::string& prefix, int input) {
    const std::string base = prefix + "scan_input_" + std::to_string(input);
    Constant(base + "/index", onnx::TensorProto::INT64, index, false);
    onnx::NodeProto gather;
    gather.set_op_type("Gather");
    gather.set_name(base + "/gather");
    gather.add_input(value);
    gather.add_input(base + "/index");
    gather.add_output(base);
    AddInt(gather, "axis", axis);
    nodes_.push_back(std::move(gather));
    return base;
  }

 private:
  static void AddInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
    onnx::AttributeProto* attribute = node.add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(value);
  }

  // A node of a copied body: its own values renamed, and references inside its nested bodies.
  static void RenameReferences(onnx::NodeProto& node,
                               const std::map<std::string, std::string>& renamed) {
    auto rename = [&](std::string* name) {
      auto found = renamed.find(*name);
      if (found != renamed.end()) *name = found->second;
    };
    for (std::string& input : *node.mutable_input()) rename(&input);
    for (std::string& output : *node.mutable_output()) rename(&output);
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) graph::RenameReferences(*attribute.mutable_g(), renamed);
      for (onnx::GraphProto& body : *attribute.mutable_graphs()) {
        graph::RenameReferences(body, renamed);
      }
    }
  }

  bool Collides(const onnx::GraphProto& body, const std::vector<std::string>& local) const {
    for (const std::string& name : local) {
      if (used_.count(name) != 0) return true;
    }
    for (const onnx::NodeProto& node : body.node()) {
      if (!node.name().empty() && used_.count(node.name()) != 0) return true;
    }
    return false;
  }

  const onnx::NodeProto& site_;
  std::string name_;
  int64_t opset_;
  std::set<std::string>& used_;
  std::string fallback_prefix_;
  std::vector<onnx::NodeProto> nodes_;
  std::vector<onnx::TensorProto> initializers_;
  std::vector<std::string> values_;             // outputs of copied body nodes
  std::map<std::string, std::string> hoisted_;  // body initializer -> its one main-graph copy
};

void ExpandIf(const onnx::NodeProto& node, bool then_branch, SiteBuilder& builder) {
  const char* branch = then_branch ? "then_branch" : "else_branch";
  builder.set_fallback_prefix(SiteName(node) + "/" + branch + "/");
  const std::vector<std::string> outputs = builder.Inline(*FindGraph(node, branch), {}, "");
  for (size_t idx = 0; idx < outputs.size(); ++idx) {
    builder.Output(static_cast<int>(idx), outputs[idx]);
  }
}

void ExpandLoop(const onnx::NodeProto& node, int64_t iterations, SiteBuilder& builder) {
  const onnx::GraphProto& body = *FindGraph(node, "body");
  const std::string name = SiteName(node);
  const int carried = node.input_size() - 2;
  const bool iteration_rank1 = body.input_size() > 0 && DeclaredRank1(body.input(0));
  const bool condition_rank1 = body.input_size() > 1 && DeclaredRank1(body.input(1));
  std::string condition = node.input_size() > 1 ? node.input(1) : "";
  if (condition.empty()) {
    condition = builder.Constant(name + "/condition", onnx::TensorProto::BOOL, 1, condition_rank1);
  }
  std::vector<std::string> state(node.input().begin() + 2, node.input().end());
  std::vector<std::vector<std::string>> scans;
  for (int64_t k = 0; k < iterations; ++k) {
    const std::string prefix = name + "/iter" + std::to_string(k) + "/";
    std::vector<std::string> bindings = {
        builder.Constant(prefix + "iteration", onnx::TensorProto::INT64, k, iteration_rank1),
        condition};
    bindings.insert(bindings.end(), state.begin(), state.end());
    const std::vector<std::string> outputs = builder.Inline(body, bindings, prefix);
    if (outputs.empty()) break;
    condition = outputs[0];
    for (int idx = 0; idx < carried && 1 + idx < static_cast<int>(outputs.size()); ++idx) {
      state[idx] = outputs[1 + idx];
    }
    scans.resize(outputs.size() - std::min<size_t>(outputs.size(), 1 + carried));
    for (size_t scan = 0; scan < scans.size(); ++scan) {
      scans[scan].push_back(outputs[1 + carried + scan]);
    }
  }
  for (int idx = 0; idx < carried; ++idx) builder.Output(idx, state[idx]);
  for (size_t scan = 0; scan < scans.size(); ++scan) {
    builder.Stack(carried + static_cast<int>(scan), scans[scan], 0);
  }
}

void ExpandScan(const onnx::NodeProto& node, int64_t iterations, SiteBuilder& builder) {
  const onnx::GraphProto& body = *FindGraph(node, "body");
  const std::string name = SiteName(node);
  const int scan_inputs = static_cast<int>(IntOf(node, "num_scan_inputs", 0));
  const int states = node.input_size() - scan_inputs;
  std::vector<std::string> state(node.input().begin(), node.input().begin() + states);
  std::vector<std::vector<std::string>> scans;
  for (int64_t k = 0; k < iterations; ++k) {
    const std::string prefix = name + "/iter" + std::to_string(k) + "/";
    std::vector<std::string> bindings = state;
    for (int input = 0; input < scan_inputs; ++input) {
      const bool reverse = IntAt(node, "scan_input_directions", input, 0) == 1;
      const int64_t index = reverse ? iterations - 1 - k : k;
      bindings.push_back(builder.Slice(node.input(states + input), index,
                                       IntAt(node, "scan_input_axes", input, 0), prefix, input));
    }
    const std::vector<std::string> outputs = builder.Inline(body, bindings, prefix);
    for (int idx = 0; idx < states && idx < static_cast<int>(outputs.size()); ++idx) {
      state[idx] = outputs[idx];
    }
    scans.resize(outputs.size() - std::min<size_t>(outputs.size(), states));
    for (size_t scan = 0; scan < scans.size(); ++scan) {
      scans[scan].push_back(outputs[states + scan]);
    }
  }
  for (int idx = 0; idx < states; ++idx) builder.Output(idx, state[idx]);
  for (size_t scan = 0; scan < scans.size(); ++scan) {
    std::vector<std::string> parts = scans[scan];
    if (IntAt(node, "scan_output_directions", static_cast<int>(scan), 0) == 1) {
      std::reverse(parts.begin(), parts.end());
    }
    builder.Stack(states + static_cast<int>(scan), parts,
                  IntAt(node, "scan_output_axes", static_cast<int>(scan), 0));
  }
}

}  // namespace

namespace {

std::vector<SubgraphSite> SitesOf(const onnx::ModelProto& model) {
  std::vector<SubgraphSite> sites;
  for (int idx = 0; idx < model.graph().node_size(); ++idx) {
    const onnx::NodeProto& node = model.graph().node(idx);
    if (IsSiteOp(node)) sites.push_back(SiteOf(model, node, static_cast<size_t>(idx)));
  }
  return sites;
}

}  // namespace

Result<std::vector<SubgraphSite>> ListSubgraphSites(std::string_view model_bytes,
                                                    const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, path));
  return SitesOf(model);
}

Result<std::vector<SubgraphSite>> ListSubgraphSitesInFile(const std::filesystem::path& path) {
  int64_t size = 0;
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelStructureFile(path, &size));
  return SitesOf(model);
}

Result<ExpandedModel> ExpandSubgraphs(std::string_view model_bytes,
                                      const std::vector<SiteExpansion>& expansions,
                                      const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, path));
  const int64_t opset = DefaultOpset(model);
  onnx::GraphProto& graph = *model.mutable_graph();
  std::map<size_t, const SiteExpansion*> by_index;
  for (const SiteExpansion& expansion : expansions) {
    const bool valid = expansion.node_index < static_cast<size_t>(graph.node_size()) &&
                       IsSiteOp(graph.node(static_cast<int>(expansion.node_index)));
    if (!valid) {
      return Status::InvalidArgument(path.string() + ": node " +
                                     std::to_string(expansion.node_index) +
                                     " is not an If, Loop or Scan of the main graph");
    }
    const onnx::NodeProto& node = graph.node(static_cast<int>(expansion.node_index));
    const SubgraphSite site = SiteOf(model, node, expansion.node_index);
    if (!site.unsupported.empty()) {
      return Status::Unimplemented(path.string() + ": " + site.node + ": " + site.unsupported);
    }
    if (node.op_type() != "If" && expansion.iterations < 1) {
      return Status::InvalidArgument(path.string() + ": " + site.node +
                                     ": unrolling needs at least one iteration");
    }
    by_index[expansion.node_index] = &expansion;
  }
  std::set<std::string> used = UsedNames(graph);
  ExpandedModel expanded;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    const onnx::NodeProto& node = graph.node(idx);
    auto found = by_index.find(static_cast<size_t>(idx));
    if (found == by_index.end()) {
      *nodes.Add() = node;
      continue;
    }
    SiteBuilder builder(node, opset, used);
    if (node.op_type() == "If") ExpandIf(node, found->second->then_branch, builder);
    if (node.op_type() == "Loop") ExpandLoop(node, found->second->iterations, builder);
    if (node.op_type() == "Scan") ExpandScan(node, found->second->iterations, builder);
    expanded.values[found->first] = builder.values();
    for (onnx::NodeProto& added : builder.nodes()) {
      if (IsSiteOp(added)) expanded.nested[found->first].push_back(SiteName(added));
      *nodes.Add() = std::move(added);
    }
    for (onnx::TensorProto& tensor : builder.initializers()) {
      *graph.add_initializer() = std::move(tensor);
    }
  }
  graph.mutable_node()->Swap(&nodes);
  if (!model.SerializeToString(&expanded.bytes)) {
    return Status::Unimplemented(path.string() +
                                 ": cannot serialize the expanded model (protobuf's 2 GB limit)");
  }
  return expanded;
}

}  // namespace convgate::graph
