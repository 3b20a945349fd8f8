// Every check collects its violations rather than stopping at the first: a spec author fixes them
// in one pass, as with a compiler's errors.
#include "convgate/pipeline/wiring.h"

#include <algorithm>

namespace convgate::pipeline {
namespace {

// Symbols are tied together by edges (union-find) and each group to at most one fixed size.
class SymbolTable {
 public:
  std::string Root(const std::string& symbol) {
    auto it = parent_.find(symbol);
    if (it == parent_.end() || it->second == symbol) return symbol;
    return it->second = Root(it->second);
  }
  // An empty string when consistent, else what contradicts.
  std::string BindFixed(const std::string& symbol, int64_t value, const std::string& where) {
    const std::string root = Root(symbol);
    auto it = fixed_.find(root);
    if (it == fixed_.end()) {
      fixed_[root] = {value, where};
      bindings_.push_back(symbol + "=" + std::to_string(value) + " (" + where + ")");
      return {};
    }
    if (it->second.first == value) return {};
    return "'" + symbol + "' would be " + std::to_string(value) + ", but it is " +
           std::to_string(it->second.first) + " from " + it->second.second;
  }
  std::string Unite(const std::string& a, const std::string& b, const std::string& where) {
    const std::string root_a = Root(a);
    const std::string root_b = Root(b);
    if (root_a == root_b) return {};
    auto fixed_b = fixed_.find(root_b);
    parent_[root_b] = root_a;
    if (fixed_b == fixed_.end()) return {};
    const auto [value, from] = fixed_b->second;
    fixed_.erase(fixed_b);
    return BindFixed(root_a, value, from + ", " + where);
  }
  std::vector<std::string> bindings() const { return bindings_; }

 private:
  std::map<std::string, std::string> parent_;
  std::map<std::string, std::pair<int64_t, std::string>> fixed_;
  std::vector<std::string> bindings_;
};

class Checker {
 public:
  Checker(const Spec& spec, const std::set<std::string>& set,
          const std::map<size_t, const Tensor*>& initial)
      : spec_(spec), set_(set), initial_(initial) {}

  Result<Wiring> Run() {
    wiring_.feeds.resize(spec_.nodes.size());
    for (size_t node_idx = 0; node_idx < spec_.nodes.size(); ++node_idx) {
      wiring_.feeds[node_idx].assign(spec_.nodes[node_idx].inputs.size(), -2);
    }
    for (size_t edge_idx = 0; edge_idx < spec_.edges.size(); ++edge_idx) CheckEdge(edge_idx);
    CheckFed();
    CheckPipelineInputs();
    OrderNodes();
    if (!violations_.empty()) return Failure();
    wiring_.bindings = symbols_.bindings();
    return std::move(wiring_);
  }

 private:
  std::string Where(const EdgeSpec& edge) const {
    return "edge " + edge.ToString() + " (" + spec_.path.string() + ":" +
           std::to_string(edge.line) + ")";
  }

  const TensorInfo* FromDecl(const EdgeSpec& edge) {
    if (edge.from.node.empty()) return nullptr;  // a pipeline input takes its consumer's decl
    const NodeSpec& node = *spec_.FindNode(edge.from.node);
    const TensorInfo* decl = FindDecl(node.outputs, edge.from.tensor);
    if (decl == nullptr) {
      Violation("node '" + node.name + "' has no output '" + edge.from.tensor + "' (" +
                Where(edge) + "; its outputs: " + Names(node.outputs) + ")");
    }
    return decl;
  }

  const TensorInfo* ToDecl(const EdgeSpec& edge, size_t edge_idx) {
    if (edge.to.node.empty()) return nullptr;  // a pipeline output
    const NodeSpec& node = *spec_.FindNode(edge.to.node);
    const TensorInfo* decl = FindDecl(node.inputs, edge.to.tensor);
    if (decl == nullptr) {
      Violation("node '" + node.name + "' has no input '" + edge.to.tensor + "' (" + Where(edge) +
                "; its inputs: " + Names(node.inputs) + ")");
      return nullptr;
    }
    const size_t node_idx = static_cast<size_t>(&node - spec_.nodes.data());
    const size_t input_idx = static_cast<size_t>(decl - node.inputs.data());
    int& feed = wiring_.feeds[node_idx][input_idx];
    if (feed >= 0) {
      Violation("node '" + node.name + "' input '" + edge.to.tensor + "' is fed twice: by " +
                Where(spec_.edges[feed]) + " and by " + Where(edge));
    } else {
      feed = static_cast<int>(edge_idx);
    }
    return decl;
  }

  void CheckEdge(size_t edge_idx) {
    const EdgeSpec& edge = spec_.edges[edge_idx];
    const TensorInfo* from = FromDecl(edge);
    const TensorInfo* to = ToDecl(edge, edge_idx);
    if (edge.feedback) {
      wiring_.feedback.push_back(edge_idx);
      if (to != nullptr) CheckInitial(edge_idx, *to);
    }
    if (from == nullptr || to == nullptr) return;
    CheckAgree(edge.from.ToString(), *from, edge.to.ToString(), *to, Where(edge));
  }

  // The two declarations of one connection agree: dtype, rank, fixed dims, symbol bindings.
  void CheckAgree(const std::string& a_name, const TensorInfo& a, const std::string& b_name,
                  const TensorInfo& b, const std::string& where) {
    const std::string both = " (" + a_name + " declares " + DescribeDecl(a) + ", " + b_name +
                             " declares " + DescribeDecl(b) + ")";
    if (a.dtype.has_value() && b.dtype.has_value() && *a.dtype != *b.dtype) {
      Violation(where + ": dtype differs" + both);
    }
    if (!a.has_shape || !b.has_shape) return;
    if (a.shape.size() != b.shape.size()) {
      Violation(where + ": rank differs" + both);
      return;
    }
    for (size_t axis = 0; axis < a.shape.size(); ++axis) {
      const std::string problem = AgreeDim(a.shape[axis], b.shape[axis], where);
      if (!problem.empty()) {
        Violation(where + ": dim " + std::to_string(axis) + " differs: " + problem + both);
      }
    }
  }

  std::string AgreeDim(const Dim& a, const Dim& b, const std::string& where) {
    if (a.is_fixed() && b.is_fixed()) {
      return a.value == b.value ? std::string()
                                : std::to_string(a.value) + " vs " + std::to_string(b.value);
    }
    if (a.is_fixed() && !b.symbol.empty()) return symbols_.BindFixed(b.symbol, a.value, where);
    if (b.is_fixed() && !a.symbol.empty()) return symbols_.BindFixed(a.symbol, b.value, where);
    if (!a.symbol.empty() && !b.symbol.empty()) return symbols_.Unite(a.symbol, b.symbol, where);
    return {};
  }

  void CheckInitial(size_t edge_idx, const TensorInfo& to) {
    auto it = initial_.find(edge_idx);
    if (it == initial_.end() || it->second == nullptr) return;
    const EdgeSpec& edge = spec_.edges[edge_idx];
    TensorInfo value;
    value.name = "initial value";
    value.dtype = it->second->dtype();
    value.type_name = std::string(DTypeName(it->second->dtype()));
    value.has_shape = true;
    for (int64_t dim : it->second->shape().dims()) value.shape.push_back(Dim::Fixed(dim));
    CheckAgree("initial value " + edge.initial->Describe(), value, edge.to.ToString(), to,
               Where(edge));
  }

  void CheckFed() {
    for (size_t node_idx = 0; node_idx < spec_.nodes.size(); ++node_idx) {
      const NodeSpec& node = spec_.nodes[node_idx];
      for (size_t input_idx = 0; input_idx < node.inputs.size(); ++input_idx) {
        int& feed = wiring_.feeds[node_idx][input_idx];
        const std::string name = node.name + "." + node.inputs[input_idx].name;
        if (set_.count(name) != 0) {
          feed = feed >= 0 ? feed : -1;
        } else if (feed == -2) {
          Violation("node '" + node.name + "' input '" + node.inputs[input_idx].name +
                    "' (declared " + DescribeDecl(node.inputs[input_idx]) +
                    ") is not fed: no edge, pipeline input or feedback edge ends there, and no "
                    "--set " +
                    name + "=FILE gives it");
        }
      }
    }
  }

  // Each pipeline input is declared as its first consumer declares it; the others must agree.
  void CheckPipelineInputs() {
    for (const std::string& name : spec_.inputs) {
      const TensorInfo* first = nullptr;
      std::string first_name;
      for (const EdgeSpec& edge : spec_.edges) {
        if (!edge.from.node.empty() || edge.from.tensor != name || edge.to.node.empty()) continue;
        const TensorInfo* decl = FindDecl(spec_.FindNode(edge.to.node)->inputs, edge.to.tensor);
        if (decl == nullptr) continue;
        if (first == nullptr) {
          first = decl;
          first_name = edge.to.ToString();
          continue;
        }
        CheckAgree(first_name, *first, edge.to.ToString(), *decl,
                   "pipeline input '" + name + "' feeds both " + first_name + " and " +
                       edge.to.ToString());
      }
      if (first == nullptr) {
        Violation("pipeline input '" + name + "' feeds no node input");
        continue;
      }
      TensorInfo info = *first;
      info.name = name;
      wiring_.inputs.push_back(std::move(info));
    }
  }

  // Kahn's algorithm over in-step edges; what is left over lies on a cycle.
  void OrderNodes() {
    const size_t count = spec_.nodes.size();
    std::vector<int> pending(count, 0);
    std::vector<std::vector<size_t>> next(count);
    for (const EdgeSpec& edge : spec_.edges) {
      if (edge.feedback || edge.from.node.empty() || edge.to.node.empty()) continue;
      const size_t from = Index(edge.from.node);
      const size_t to = Index(edge.to.node);
      next[from].push_back(to);
      ++pending[to];
    }
    std::vector<size_t> ready;
    for (size_t idx = 0; idx < count; ++idx) {
      if (pending[idx] == 0) ready.push_back(idx);
    }
    for (size_t pos = 0; pos < ready.size(); ++pos) {
      wiring_.order.push_back(ready[pos]);
      for (size_t to : next[ready[pos]]) {
        if (--pending[to] == 0) ready.push_back(to);
      }
    }
    if (wiring_.order.size() == count) return;
    std::string stuck;
    for (size_t idx = 0; idx < count; ++idx) {
      if (pending[idx] > 0) stuck += (stuck.empty() ? "'" : ", '") + spec_.nodes[idx].name + "'";
    }
    Violation("nodes " + stuck +
              " lie on a cycle of in-step edges: a value can only come back through a feedback "
              "edge (list that edge under `feedback:` with an initial value)");
  }

  size_t Index(const std::string& node) const {
    return static_cast<size_t>(spec_.FindNode(node) - spec_.nodes.data());
  }

  static std::string Names(const std::vector<TensorInfo>& decls) {
    std::string text;
    for (const TensorInfo& info : decls) text += (text.empty() ? "" : ", ") + info.name;
    return text.empty() ? "none" : text;
  }

  void Violation(std::string text) { violations_.push_back(std::move(text)); }

  Status Failure() const {
    std::string text = spec_.path.string() + ": the pipeline's wiring is wrong (" +
                       std::to_string(violations_.size()) + " problem" +
                       (violations_.size() == 1 ? "" : "s") + "):";
    for (const std::string& violation : violations_) text += "\n  " + violation;
    return Status::InvalidArgument(text);
  }

  const Spec& spec_;
  const std::set<std::string>& set_;
  const std::map<size_t, const Tensor*>& initial_;
  Wiring wiring_;
  SymbolTable symbols_;
  std::vector<std::string> violations_;
};

}  // namespace

Result<Wiring> ValidateWiring(const Spec& spec, const std::set<std::string>& set,
                              const std::map<size_t, const Tensor*>& initial) {
  return Checker(spec, set, initial).Run();
}

}  // namespace convgate::pipeline
