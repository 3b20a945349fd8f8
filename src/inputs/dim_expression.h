// Symbolic dims that are expressions of other symbols. Exporters write a dim computed from
// others as its formula: optimum's ONNX export of a decoder with past gives attention_mask the
// dim "past_sequence_length + sequence_length". Binding such a "symbol" to 1 like any other makes
// inputs the model refuses (a mask of length 1 beside a past of 1 and ids of 1); evaluating it
// from its parts makes them agree.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convgate::inputs::internal {

// The identifiers of `symbol` when it is an expression of integers and identifiers joined by
// '+', '-' and '*' (spaces anywhere); nullopt for a plain symbol ("batch") or anything else
// (parentheses, division, two operands in a row).
std::optional<std::vector<std::string>> ExpressionParts(std::string_view symbol);

// Evaluates an expression ExpressionParts accepts, '*' before '+' and '-', taking each
// identifier's value from `value_of`. nullopt when the text is not such an expression or the
// result is negative or overflows.
std::optional<int64_t> EvaluateDimExpression(
    std::string_view symbol, const std::function<int64_t(const std::string&)>& value_of);

}  // namespace convgate::inputs::internal
