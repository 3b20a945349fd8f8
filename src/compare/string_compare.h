// Comparison of string tensors (internal to the compare module). Strings are compared as exact
// byte strings: a converted model either produces the same text or it does not, and no tolerance
// or normalization (Unicode forms, case) would be a neutral default.
#pragma once

#include <string>
#include <string_view>

#include "convgate/compare/tensor_compare.h"
#include "convgate/core/tensor.h"

namespace convgate::compare::internal {

// Sets mismatches, mismatch_fraction and worst (the first unequal element) of `result` and adds
// the failure sentence when any element differs. REQUIRES: both tensors are kString and have the
// same number of elements.
void CompareStrings(const Tensor& source, const Tensor& target, TensorComparison& result);

// Characters of a string shown in a message before it is cut.
inline constexpr size_t kMaxQuotedChars = 60;

// `text` as a message shows it: in double quotes; printable ASCII and valid UTF-8 characters as
// they are; '"' and '\' escaped; \n, \r, \t spelled so; any other byte (controls, invalid UTF-8)
// as \xNN. After kMaxQuotedChars characters the rest is cut and the full length given:
// "abc..."... (200 bytes). A message must stay one readable line whatever a model emits.
std::string QuoteString(std::string_view text);

}  // namespace convgate::compare::internal
