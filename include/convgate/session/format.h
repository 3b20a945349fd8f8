// Small formatting helpers shared by the gate's messages, so every message spells numbers,
// counts and indices the same way.
#pragma once

#include <cstdint>
#include <string>

#include "convgate/core/tensor.h"

namespace convgate::session {

// "3 of 10 elements (30%)".
std::string CountOf(int64_t count, int64_t total);
// %.6g (core's FormatSignificant), "nan" for a NaN of either sign ("0.001", "1e-05", "-inf").
std::string Number(double value);
// First flat index whose value satisfies `match`, or -1.
int64_t FirstIndexWhere(const Tensor& tensor, bool (*match)(double));

}  // namespace convgate::session
