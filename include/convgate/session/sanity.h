// The end-to-end sanity rules of `convgate run` (OpenVINO's verify-conversion gate, step 3):
// every output is non-empty, has no NaN/Inf, has the declared dtype, and a shape consistent with
// the declared one, with each symbolic dim bound to one value across inputs and outputs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/tensor.h"
#include "convgate/session/records.h"

namespace convgate::session {

// Symbolic dims seen so far in one sample: symbol -> value and where it was bound.
class SymbolBindings {
 public:
  // Binds the symbols of every declared input from the sample's actual shapes.
  void BindInputs(const Signature& signature, const TensorMap& sample);
  // "batch=2 (from input 'image' dim 0)", in binding order.
  std::vector<std::string> Describe() const;

  struct Binding {
    int64_t value;
    std::string where;  // "input 'image' dim 0"
  };
  // Null when unbound.
  const Binding* Find(const std::string& symbol) const;
  void Bind(const std::string& symbol, int64_t value, std::string where);

 private:
  std::map<std::string, Binding> bindings_;
  std::vector<std::string> order_;
};

// Checks one output. `declared` may be null (the output is not in the signature).
SanityCheck CheckOutputSanity(int sample, const std::string& name, const Tensor& tensor,
                              const TensorInfo* declared, bool inputs_finite,
                              SymbolBindings& bindings);

}  // namespace convgate::session
