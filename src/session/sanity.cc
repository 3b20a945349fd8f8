#include "convgate/session/sanity.h"

#include <cmath>

#include "convgate/compare/tensor_compare.h"
#include "convgate/session/format.h"

namespace convgate::session {
namespace {

std::string Quote(const std::string& name) { return "'" + name + "'"; }

void CheckNonFinite(const std::string& name, const Tensor& tensor, bool inputs_finite,
                    SanityCheck& check) {
  const compare::ValueSummary& values = check.values;
  const int64_t total = tensor.num_elements();
  const char* origin = inputs_finite ? "introduced" : "non-finite";
  const std::string because = inputs_finite ? " (the inputs are finite, so the model produced them)"
                                            : " (the inputs hold non-finite values too)";
  auto report = [&](int64_t count, const std::string& what, bool (*match)(double)) {
    if (count == 0) return;
    const int64_t first = FirstIndexWhere(tensor, match);
    check.failures.push_back(std::string(origin) + " " + what + ": output " + Quote(name) +
                             " has " + CountOf(count, total) + " " + what + ", first at " +
                             FormatIndex(tensor.shape().Unravel(first)) + because);
  };
  report(values.nan, "NaN", [](double v) { return std::isnan(v); });
  report(values.pos_inf + values.neg_inf, "Inf", [](double v) { return std::isinf(v); });
}

// A string output with elements, every one empty or whitespace: the text a model produced says
// nothing (OpenVINO's verify-conversion gate fails a blank decode; the hf backend's 'text').
void CheckBlank(const std::string& name, const Tensor& tensor, SanityCheck& check) {
  if (tensor.dtype() != DType::kString || tensor.num_elements() == 0) return;
  for (const std::string& text : tensor.strings()) {
    if (text.find_first_not_of(" \t\n\r\f\v") != std::string::npos) return;
  }
  check.failures.push_back(
      "blank: output " + Quote(name) + " holds " + std::to_string(tensor.num_elements()) +
      (tensor.num_elements() == 1 ? " string, empty or whitespace"
                                  : " strings, every one empty or whitespace"));
}

std::string DimName(const Dim& dim) {
  if (dim.is_fixed()) return std::to_string(dim.value);
  return dim.symbol.empty() ? "?" : dim.symbol;
}

void CheckShape(const std::string& name, const Tensor& tensor, const TensorInfo& declared,
                SymbolBindings& bindings, SanityCheck& check) {
  const std::vector<int64_t>& dims = tensor.shape().dims();
  const std::string actual = tensor.shape().ToString();
  if (dims.size() != declared.shape.size()) {
    check.failures.push_back("shape: output " + Quote(name) + " has rank " +
                             std::to_string(dims.size()) + " " + actual +
                             " but the model declares rank " +
                             std::to_string(declared.shape.size()) + " " + FormatDims(declared));
    return;
  }
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    const Dim& dim = declared.shape[axis];
    const std::string where = "output " + Quote(name) + " dim " + std::to_string(axis);
    if (dim.is_fixed() && dim.value != dims[axis]) {
      check.failures.push_back("shape: output " + Quote(name) + " is " + actual +
                               " but the model declares " + FormatDims(declared) + ": dim " +
                               std::to_string(axis) + " is " + std::to_string(dims[axis]) +
                               ", declared " + DimName(dim));
    } else if (!dim.is_fixed() && !dim.symbol.empty()) {
      const SymbolBindings::Binding* bound = bindings.Find(dim.symbol);
      if (bound == nullptr) {
        bindings.Bind(dim.symbol, dims[axis], where);
      } else if (bound->value != dims[axis]) {
        check.failures.push_back("shape: " + where + " ('" + dim.symbol + "') is " +
                                 std::to_string(dims[axis]) + ", but '" + dim.symbol + "' is " +
                                 std::to_string(bound->value) + " from " + bound->where);
      }
    }
  }
}

}  // namespace

void SymbolBindings::BindInputs(const Signature& signature, const TensorMap& sample) {
  for (const TensorInfo& info : signature.inputs) {
    const Tensor* tensor = sample.Find(info.name);
    if (tensor == nullptr || !info.has_shape || tensor->shape().rank() != info.shape.size()) {
      continue;
    }
    for (size_t axis = 0; axis < info.shape.size(); ++axis) {
      const Dim& dim = info.shape[axis];
      if (dim.is_fixed() || dim.symbol.empty() || Find(dim.symbol) != nullptr) continue;
      Bind(dim.symbol, tensor->shape().dim(axis),
           "input '" + info.name + "' dim " + std::to_string(axis));
    }
  }
}

std::vector<std::string> SymbolBindings::Describe() const {
  std::vector<std::string> lines;
  for (const std::string& symbol : order_) {
    const Binding& binding = bindings_.at(symbol);
    lines.push_back(symbol + "=" + std::to_string(binding.value) + " (from " + binding.where + ")");
  }
  return lines;
}

const SymbolBindings::Binding* SymbolBindings::Find(const std::string& symbol) const {
  auto it = bindings_.find(symbol);
  return it == bindings_.end() ? nullptr : &it->second;
}

void SymbolBindings::Bind(const std::string& symbol, int64_t value, std::string where) {
  if (bindings_.emplace(symbol, Binding{value, std::move(where)}).second) order_.push_back(symbol);
}

SanityCheck CheckOutputSanity(int sample, const std::string& name, const Tensor& tensor,
                              const TensorInfo* declared, bool inputs_finite,
                              SymbolBindings& bindings) {
  SanityCheck check;
  check.sample = sample;
  check.output = name;
  check.dtype = DTypeName(tensor.dtype());
  check.shape = tensor.shape().dims();
  check.num_elements = tensor.num_elements();
  check.values = compare::SummarizeValues(tensor);
  if (tensor.num_elements() == 0) {
    check.failures.push_back("empty: output " + Quote(name) + " has shape " +
                             tensor.shape().ToString() + " and no elements");
  }
  CheckNonFinite(name, tensor, inputs_finite, check);
  CheckBlank(name, tensor, check);
  if (declared == nullptr) {
    check.failures.push_back("undeclared: the runtime returned output " + Quote(name) +
                             ", which the model does not declare");
  } else {
    check.declared_dtype = declared->type_name;
    check.declared_shape = FormatDims(*declared);
    if (declared->dtype.has_value() && *declared->dtype != tensor.dtype()) {
      check.failures.push_back("dtype: output " + Quote(name) + " is " + check.dtype +
                               " but the model declares " + declared->type_name);
    }
    if (declared->has_shape) CheckShape(name, tensor, *declared, bindings, check);
  }
  check.passed = check.failures.empty();
  return check;
}

}  // namespace convgate::session
