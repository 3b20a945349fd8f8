#include "convgate/core/scoped.h"

namespace convgate {

ScopedValue SplitScoped(std::string_view text) {
  int depth = 0;
  size_t split = std::string_view::npos;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '[' || c == '(') ++depth;
    if ((c == ']' || c == ')') && depth > 0) --depth;
    if (c == ':' && depth == 0) split = pos;
  }
  if (split == std::string_view::npos) return ScopedValue{"", std::string(text), false};
  return ScopedValue{std::string(text.substr(0, split)), std::string(text.substr(split + 1)), true};
}

}  // namespace convgate
