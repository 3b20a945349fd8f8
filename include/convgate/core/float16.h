// IEEE 754 binary16 and bfloat16 conversions, bit-exact and independent of the compiler's
// _Float16 support. Float -> half rounds to nearest, ties to even; NaN stays NaN (quiet),
// values beyond the half range become +-Inf, as numpy's astype(np.float16) does.
#pragma once

#include <cstdint>

namespace convgate {

float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);

}  // namespace convgate
