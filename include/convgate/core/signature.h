// What a model (or a set of saved outputs) declares about its inputs and outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convgate/core/dtype.h"

namespace convgate {

// One declared dimension: a fixed size, a named symbol ("batch"), or unknown (neither).
struct Dim {
  int64_t value = -1;  // >= 0 when fixed
  std::string symbol;  // non-empty when symbolic

  bool is_fixed() const { return value >= 0; }
  static Dim Fixed(int64_t v) { return Dim{v, ""}; }
  static Dim Symbolic(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim Unknown() { return Dim{}; }
};

struct TensorInfo {
  std::string name;
  // nullopt when the declared element type is one convgate cannot hold (complex, fp8, ...);
  // type_name then says what it is.
  std::optional<DType> dtype;
  std::string type_name;   // "float32", "string", "seq(tensor(float))", ...
  bool has_shape = false;  // false when the model declares no shape at all (rank unknown)
  std::vector<Dim> shape;  // valid when has_shape
};

struct Signature {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;

  const TensorInfo* FindInput(const std::string& name) const;
  const TensorInfo* FindOutput(const std::string& name) const;
};

// "[batch, 3, 224, 224]"; "?" for an unknown dim; "(no shape)" when has_shape is false.
std::string FormatDims(const TensorInfo& info);

}  // namespace convgate
