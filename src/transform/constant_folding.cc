// constant_folding: a node whose inputs are all constants (constants.h: initializers, Constant
// nodes, Identity over either, or outputs folded before it) is evaluated by ONNX Runtime, as a
// one-node model with those constants as initializers, and its outputs become initializers. ONNX
// Runtime rather than hand-written kernels so that any op it runs folds, with the very kernels
// that run the model. Exact for the same reason. Left alone, and recorded with the reason: random
// ops, nodes with subgraphs or a non-default domain, nodes producing graph outputs, outputs whose
// type shape inference cannot tell, and (param max_elements=N) outputs larger than N elements.
// Constant and Identity nodes left unread are removed.
#include <onnx/shape_inference/implementation.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <set>
#include <unordered_set>

#include "convgate/backends/registry.h"
#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"
#include "convgate/graph/internal/external_data.h"
#include "transform/constants.h"
#include "transform/graph_edit.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

namespace fs = std::filesystem;

bool HasSubgraph(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.has_g() || attr.graphs_size() > 0) return true;
  }
  return false;
}

constexpr char kKind[] = "constant-input";

// True for the candidates: nodes other than Constant that read at least one input, all constants.
bool ReadsOnlyConstants(const onnx::GraphProto& graph, const onnx::NodeProto& node) {
  if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx")) {
    return false;
  }
  bool any_input = false;
  for (const std::string& input : node.input()) {
    if (input.empty()) continue;
    if (!LookUpConstant(graph, input)) return false;
    any_input = true;
  }
  return any_input;
}

// Why a candidate cannot be folded; empty when it can.
std::string FoldSkip(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                     std::string& detail) {
  static const std::set<std::string> kRandom = {"RandomNormal",  "RandomNormalLike",
                                                "RandomUniform", "RandomUniformLike",
                                                "Multinomial",   "Bernoulli"};
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    detail = "domain '" + node.domain() + "'";
    return "it is not in the default ONNX domain";
  }
  if (kRandom.count(node.op_type()) != 0) {
    detail = node.op_type();
    return "it draws random numbers";
  }
  if (HasSubgraph(node)) return "it has a subgraph";
  for (const std::string& output : node.output()) {
    if (IsGraphOutput(graph, output)) {
      detail = "'" + output + "'";
      return "it produces a graph output";
    }
  }
  return "";
}

// The node alone, its constant inputs as initializers, its outputs typed by shape inference;
// nullopt when inference cannot type an output.
std::optional<onnx::ModelProto> OneNodeModel(const onnx::ModelProto& model,
                                             const onnx::GraphProto& graph,
                                             const onnx::NodeProto& node) {
  onnx::ModelProto one;
  // IR 4 is the first that lets initializers be absent from the graph inputs.
  one.set_ir_version(std::max<int64_t>(model.ir_version(), 4));
  *one.mutable_opset_import() = model.opset_import();
  onnx::GraphProto* body = one.mutable_graph();
  body->set_name("constant_folding");
  *body->add_node() = node;
  std::unordered_set<std::string> added;
  for (const std::string& input : node.input()) {
    if (input.empty() || !added.insert(input).second) continue;
    onnx::TensorProto* init = body->add_initializer();
    *init = *LookUpConstant(graph, input).proto();
    init->set_name(input);
    // ONNX Runtime takes the one-node model from memory: external data is read into it.
    if (!graph::LoadExternalData(*init).ok()) return std::nullopt;
  }
  try {
    onnx::shape_inference::InferShapes(one);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  for (const std::string& output : node.output()) {
    if (output.empty()) continue;
    const onnx::ValueInfoProto* typed = nullptr;
    for (const onnx::ValueInfoProto& info : body->value_info()) {
      if (info.name() == output) typed = &info;
    }
    if (typed == nullptr || !typed->type().has_tensor_type()) return std::nullopt;
    *body->add_output() = *typed;
  }
  body->clear_value_info();
  return one;
}

class ConstantFolding : public Pass {
 public:
  explicit ConstantFolding(int64_t max_elements) : max_elements_(max_elements) {}

  Status Apply(onnx::ModelProto& model, PassContext& context) override {
    CONVGATE_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("fold"));
    CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<backends::Backend> ort,
                              backends::CreateBackend("ort"));
    onnx::GraphProto& graph = *model.mutable_graph();
    std::unordered_set<int> removed;
    context.Expect(kKind);
    for (int idx = 0; idx < graph.node_size(); ++idx) {
      const onnx::NodeProto& node = graph.node(idx);
      if (!ReadsOnlyConstants(graph, node)) continue;
      context.Candidate(kKind);
      std::string detail;
      const std::string skip = FoldSkip(graph, node, detail);
      if (!skip.empty()) {
        context.Skipped(kKind, node, skip, detail);
        continue;
      }
      CONVGATE_ASSIGN_OR_RETURN(std::optional<std::vector<onnx::TensorProto>> values,
                                Evaluate(model, node, *ort, dir.path(), detail));
      if (!values) {
        context.Skipped(kKind, node, detail, "");
        continue;
      }
      std::string names;
      for (onnx::TensorProto& value : *values) {
        names += (names.empty() ? "'" : ", '") + value.name() + "'";
        *graph.add_initializer() = std::move(value);
      }
      removed.insert(idx);
      context.Removed(graph.node(idx), "evaluated by ONNX Runtime into initializer " + names);
    }
    EraseNodes(graph, removed);
    for (const onnx::NodeProto& node : EraseUnreadConstants(graph)) {
      context.Removed(node, "not read by any node after folding");
    }
    RemoveUnusedInitializers(graph);
    return Status::OK();
  }

 private:
  // The node's outputs as TensorProtos; nullopt, with `why_not` set, when the node is left alone
  // (untyped outputs, or larger than max_elements).
  Result<std::optional<std::vector<onnx::TensorProto>>> Evaluate(const onnx::ModelProto& model,
                                                                 const onnx::NodeProto& node,
                                                                 backends::Backend& ort,
                                                                 const fs::path& dir,
                                                                 std::string& why_not) const {
    using Values = std::optional<std::vector<onnx::TensorProto>>;
    std::optional<onnx::ModelProto> one = OneNodeModel(model, model.graph(), node);
    if (!one) {
      why_not = "ONNX shape inference cannot type its outputs";
      return Values();
    }
    const fs::path path = dir / "node.onnx";
    CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(path, one->SerializeAsString()));
    Result<std::unique_ptr<backends::Model>> loaded = ort.Load(path, {});
    Result<TensorMap> outputs =
        loaded.ok() ? (*loaded)->Run(TensorMap(), {}) : Result<TensorMap>(loaded.status());
    if (!outputs.ok()) {
      return Status::Unavailable("constant_folding: ONNX Runtime cannot evaluate " +
                                 node.op_type() + " '" + NodeLabel(node) +
                                 "': " + outputs.status().message());
    }
    std::vector<onnx::TensorProto> values;
    for (const TensorMap::Entry& entry : *outputs) {
      if (max_elements_ > 0 && entry.tensor.num_elements() > max_elements_) {
        why_not =
            "its result has more than max_elements=" + std::to_string(max_elements_) + " elements";
        return Values();
      }
      CONVGATE_ASSIGN_OR_RETURN(values.emplace_back(), ToProto(entry.tensor, entry.name));
    }
    return Values(std::move(values));
  }

  int64_t max_elements_;
};

}  // namespace

Result<std::unique_ptr<Pass>> MakeConstantFolding(const Params& params) {
  int64_t max_elements = 0;
  auto found = params.find("max_elements");
  if (found != params.end()) {
    char* end = nullptr;
    max_elements = std::strtoll(found->second.c_str(), &end, 10);
    if (found->second.empty() || *end != '\0' || max_elements < 0) {
      return Status::InvalidArgument("constant_folding: max_elements='" + found->second +
                                     "' is not a non-negative integer");
    }
  }
  return std::unique_ptr<Pass>(new ConstantFolding(max_elements));
}

}  // namespace convgate::transform
