// The sentences of TensorComparison::failures and ::notes. Separate from the comparison loop so
// wording changes never touch the numerics, and so every sentence is built in one place.
#pragma once

#include <cstdint>
#include <string>

#include "convgate/compare/tensor_compare.h"
#include "convgate/core/numbers.h"
#include "convgate/core/tensor.h"

namespace convgate::compare::internal {

// "dtype mismatch: source float32, target float16", plus why values were not compared when one
// side holds strings and the other numbers.
std::string DTypeMismatchMessage(const Tensor& source, const Tensor& target);
// "shape mismatch: source [1, 10], target [10]", plus why values were not compared when the
// element counts differ.
std::string ShapeMismatchMessage(const Tensor& source, const Tensor& target);

// Appends the value failures (introduced NaN, introduced Inf, values outside tolerance, inherited
// non-finite) and notes (shared NaN/Inf) for a comparison whose statistics are filled in.
// `worst_value` is the worst finite failing element (flat -1 when none), which may differ from
// result.worst when a non-finite element takes precedence there.
void AddValueMessages(const Tensor& source, const Tensor& target, const ElementReport& worst_value,
                      TensorComparison& result);

// Shortest text that reads back as the same double ("1e-05", "0.001"): core's.
using ::convgate::FormatShortest;
// 100 * count / total with 3 significant digits, never rounded up to "100" or down to "0" unless
// it is exactly that ("1.2", "30", "99.99").
std::string FormatPercent(int64_t count, int64_t total);

}  // namespace convgate::compare::internal
