#include "backends/opencv/output_dims.h"

namespace convgate::backends {
namespace {

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t dim : dims) product *= dim;
  return product;
}

}  // namespace

std::vector<int64_t> OutputDims(const TensorInfo* declared, const std::vector<int64_t>& mat_dims,
                                const SymbolValues& symbols) {
  if (declared == nullptr || !declared->has_shape) return mat_dims;
  const int64_t total = Product(mat_dims);
  std::vector<int64_t> dims;
  int unknown_axis = -1;
  int unknown_count = 0;
  for (const Dim& dim : declared->shape) {
    auto bound = symbols.find(dim.symbol);
    if (dim.is_fixed()) {
      dims.push_back(dim.value);
    } else if (!dim.symbol.empty() && bound != symbols.end()) {
      dims.push_back(bound->second);
    } else {
      unknown_axis = static_cast<int>(dims.size());
      ++unknown_count;
      dims.push_back(1);
    }
  }
  // The Mat's own dims, when they already fit the declaration, need no solving.
  if (mat_dims.size() == dims.size() && unknown_count > 0) {
    bool fits = true;
    for (size_t axis = 0; axis < dims.size(); ++axis) {
      const Dim& dim = declared->shape[axis];
      if ((dim.is_fixed() || symbols.count(dim.symbol) > 0) && dims[axis] != mat_dims[axis]) {
        fits = false;
      }
    }
    if (fits) return mat_dims;
  }
  const int64_t known = Product(dims);
  if (unknown_count == 1 && known > 0 && total % known == 0) dims[unknown_axis] = total / known;
  if (unknown_count > 1 || Product(dims) != total) return mat_dims;
  return dims;
}

SymbolValues BindSymbols(const Signature& signature, const TensorMap& inputs) {
  SymbolValues symbols;
  for (const TensorInfo& info : signature.inputs) {
    const Tensor* tensor = inputs.Find(info.name);
    if (tensor == nullptr || !info.has_shape || info.shape.size() != tensor->shape().rank()) {
      continue;
    }
    for (size_t axis = 0; axis < info.shape.size(); ++axis) {
      if (!info.shape[axis].symbol.empty()) {
        symbols.try_emplace(info.shape[axis].symbol, tensor->shape().dim(axis));
      }
    }
  }
  return symbols;
}

}  // namespace convgate::backends
