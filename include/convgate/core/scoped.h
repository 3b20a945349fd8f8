// Command-line values that apply to everything or to one named tensor: "1e-4" or "logits:1e-4",
// "[0,1]" or "x:[0,1]". One splitting rule for every such flag (--atol, --val-range, --shape, ...).
#pragma once

#include <string>
#include <string_view>

namespace convgate {

struct ScopedValue {
  std::string name;  // empty: global
  std::string value;
  bool has_name_separator = false;  // a ':' was found (":1e-4" has one, with an empty name)
};

// Tensor names may contain ':' (tf2onnx's "input:0"), so the split is at the last ':' outside
// [...] and (...): "input:0:[0,1]" -> {"input:0", "[0,1]"}; "[0,1]" -> {"", "[0,1]"};
// "x:1x3" -> {"x", "1x3"}. No value syntax contains ':' outside brackets, so a global value is
// never split.
ScopedValue SplitScoped(std::string_view text);

}  // namespace convgate
