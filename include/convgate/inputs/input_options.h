// How mock inputs are generated, and the parsers for the CLI spellings of each option.
// Parsers run before any model loads (flags are validated first) and return InvalidArgument with
// the offending text quoted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "convgate/core/shape.h"
#include "convgate/core/status.h"

namespace convgate::inputs {

enum class Fill {
  kZeros,
  kOnes,
  kUniform,  // uniform in [lo, hi) for floats, [lo, hi] for integers
  kNormal,   // mean (lo+hi)/2, standard deviation (hi-lo)/2, not clipped
};

std::string_view FillName(Fill fill);
Result<Fill> ParseFill(std::string_view text);

struct ValueRange {
  double lo = 0.0;
  double hi = 1.0;
};

struct InputOptions {
  uint64_t seed = 1;  // Polygraphy's default seed is 1 as well
  int samples = 1;
  Fill fill = Fill::kUniform;
  std::map<std::string, Fill> fill_per_input;
  // Unset: floats [0, 1) like Polygraphy; normal fill defaults to [-1, 1] (N(0, 1)); integers
  // [0, 1] inclusive, which is safe for indices, masks and token ids of any vocabulary.
  std::optional<ValueRange> range;
  std::map<std::string, ValueRange> range_per_input;
  std::map<std::string, Shape> shape_per_input;      // --shape name:1x3x224x224
  std::map<std::string, int64_t> dim_per_symbol;     // --dim batch=4
};

// A per-input option value: "VALUE" applies to all inputs (name empty), "NAME:VALUE" to one.
// Names may contain ':' (tf2onnx's "input:0"), so the split is at the last ':' outside brackets.
struct Scoped {
  std::string name;   // empty: global
  std::string value;
};
Scoped SplitScoped(std::string_view text);

// "[lo,hi]" (brackets optional, lo <= hi, finite).
Result<ValueRange> ParseValueRange(std::string_view text);
// "symbol=value" with value >= 0.
Result<std::pair<std::string, int64_t>> ParseDimBinding(std::string_view text);

// Applies one --val-range / --fill / --shape argument to `options`.
Status AddValueRange(std::string_view text, InputOptions& options);
Status AddFill(std::string_view text, InputOptions& options);
Status AddShape(std::string_view text, InputOptions& options);
Status AddDimBinding(std::string_view text, InputOptions& options);

}  // namespace convgate::inputs
