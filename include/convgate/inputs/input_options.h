// How mock inputs are generated, and the parsers for the CLI spellings of each option.
// Parsers run before any model loads (flags are validated first) and return InvalidArgument with
// the offending text quoted and the expected syntax stated.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "convgate/core/shape.h"
#include "convgate/core/status.h"

namespace convgate::inputs {

// Bool inputs ignore the value range: zeros is all false, ones all true, uniform and normal are
// fair random bits.
enum class Fill {
  kZeros,
  kOnes,
  kUniform,  // uniform in [lo, hi) for floats, [ceil(lo), floor(hi)] for integers
  kNormal,   // mean (lo+hi)/2, standard deviation (hi-lo)/2, not clipped (integers: rounded)
};

// "zeros", "ones", "uniform", "normal".
std::string_view FillName(Fill fill);
// Accepts exactly the FillName() spellings.
Result<Fill> ParseFill(std::string_view text);

struct ValueRange {
  double lo = 0.0;
  double hi = 1.0;
  // "[lo,hi)": integers stop below hi. Floats are drawn in [lo, hi) either way.
  bool hi_exclusive = false;
};

struct InputOptions {
  uint64_t seed = 1;  // Polygraphy's default seed is 1 as well
  int samples = 1;    // must be >= 1
  Fill fill = Fill::kUniform;
  bool fill_given = false;  // a global --fill was given: what the graph suggests gives way
  std::map<std::string, Fill> fill_per_input;
  // Unset: floats [0, 1) like Polygraphy; normal fill of floats defaults to [-1, 1] (N(0, 1));
  // integers [0, 1] inclusive, which is safe for indices, masks and token ids of any vocabulary.
  // Float values are drawn in double and then rounded to the element type, so a float16 value
  // drawn just below hi can round to hi itself (as numpy's uniform(...).astype(float16) does).
  std::optional<ValueRange> range;
  std::map<std::string, ValueRange> range_per_input;
  std::map<std::string, Shape> shape_per_input;   // --shape name:1x3x224x224
  std::map<std::string, int64_t> dim_per_symbol;  // --dim batch=4
};

// "[lo,hi]", "[lo,hi)" or "lo,hi": brackets optional (an opening '[' needs a closing ']' or ')'),
// spaces allowed around the numbers, decimal or scientific notation, both finite, lo <= hi.
Result<ValueRange> ParseValueRange(std::string_view text);
// "symbol=value" with value an integer >= 0 (spaces around either part are ignored).
Result<std::pair<std::string, int64_t>> ParseDimBinding(std::string_view text);

// Apply one --val-range / --fill / --shape / --dim argument to `options`: "VALUE" applies to every
// input, "NAME:VALUE" to one (convgate/core/scoped.h splits them). A later argument for the same
// input (or symbol, or the global value) replaces an earlier one; the command line refuses two for
// the same name before these run (src/cli/flag.h). --shape needs a name: a shape for every input at
// once would be wrong for all but one of them; its dims are "1x3x224x224", "1,3,224,224" or
// Polygraphy's
// "[1,3,224,224]".
Status AddValueRange(std::string_view text, InputOptions& options);
Status AddFill(std::string_view text, InputOptions& options);
Status AddShape(std::string_view text, InputOptions& options);
Status AddDimBinding(std::string_view text, InputOptions& options);

}  // namespace convgate::inputs
