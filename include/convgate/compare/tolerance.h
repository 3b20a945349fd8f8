// The tolerance policy: what "close enough" means for each output, written down once.
//
// An element passes when |t - s| <= atol + rtol * |s| (numpy.isclose with the source on the right).
// Integer and bool outputs compare exactly whatever the tolerances. Per-output overrides win over
// the global values. Every report records the policy it applied.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate::compare {

struct Tolerance {
  // LEAPP's defaults (compile_graph(validate=True, rtol=1e-3, atol=1e-5)), which DESIGN.md adopts:
  // loose enough for reordered fp32 accumulation, tight enough to catch a 1% weight change.
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct Policy {
  Tolerance global;
  std::map<std::string, double> atol_per_output;
  std::map<std::string, double> rtol_per_output;

  // The global values with this output's overrides applied.
  Tolerance For(std::string_view output) const;
};

// Applies one --atol / --rtol argument: "1e-4" sets the global value, "name:1e-4" the value for
// one output. The name ends at the last ':' because tensor names contain ':' (tf2onnx's
// "input:0"; "input:0:1e-4" is valid). Later arguments override earlier ones. Returns
// InvalidArgument quoting the text, and leaves the policy unchanged, when the value is not a
// number, negative, NaN or infinite, or the name before ':' is empty.
Status AddAtol(std::string_view text, Policy& policy);
Status AddRtol(std::string_view text, Policy& policy);

}  // namespace convgate::compare
