// "a, b, c": the comma-separated lists of names that messages print.
#pragma once

#include <string>
#include <string_view>

namespace convgate {

// The items of `range` (strings) joined by ", "; `if_empty` when there are none (e.g. "none").
template <typename Range>
std::string JoinComma(const Range& range, std::string_view if_empty = "") {
  std::string text;
  for (const auto& item : range) {
    if (!text.empty()) text += ", ";
    text += item;
  }
  return text.empty() ? std::string(if_empty) : text;
}

}  // namespace convgate
