// The shape an OpenCV DNN result is returned with (no OpenCV headers needed).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/tensor.h"

namespace convgate::backends {

// Symbol -> value, bound from the inputs of one Run ("batch" -> 4).
using SymbolValues = std::map<std::string, int64_t>;

// The shape an output is returned with. OpenCV drops or merges dimensions (a 1-D result comes
// back as n x 1), so the declared shape wins when it fits the element count: its fixed dims,
// its symbols as bound by the inputs, and at most one remaining unknown dim solved from the
// count. Otherwise (no declaration, or one that does not fit) the Mat's own dims are kept and the
// workflow reports the mismatch.
std::vector<int64_t> OutputDims(const TensorInfo* declared, const std::vector<int64_t>& mat_dims,
                                const SymbolValues& symbols);

// Binds each symbolic input dim to the size of the tensor given for it.
SymbolValues BindSymbols(const Signature& signature, const TensorMap& inputs);

}  // namespace convgate::backends
