#include "convgate/core/float16.h"

#include <cstring>

namespace convgate {
namespace {

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F) return BitsFloat(sign | 0x7F800000u | (mantissa << 13));  // Inf / NaN
  if (exponent != 0) return BitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return BitsFloat(sign);  // +-0
  // Subnormal half: value = mantissa * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

uint16_t FloatToHalf(float value) {
  const uint32_t bits = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits >= 0x7F800000u) {  // Inf or NaN; NaN keeps a quiet payload bit
    return sign | (abs_bits > 0x7F800000u ? 0x7E00u : 0x7C00u);
  }
  // 65520 is the smallest float that rounds to half Inf (65504 + half an ulp).
  if (abs_bits >= 0x477FF000u) return sign | 0x7C00u;
  if (abs_bits < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Adding 0.5 shifts the mantissa into place and lets the FPU round to nearest even.
    const float shifted = BitsFloat(abs_bits) + 0.5f;
    return sign | static_cast<uint16_t>(FloatBits(shifted) - 0x3F000000u);
  }
  // Normal: rebias exponent (127 -> 15) and round the 13 dropped mantissa bits to nearest even.
  const uint32_t odd = (abs_bits >> 13) & 1u;
  const uint32_t rounded = abs_bits + 0xFFFu + odd - (112u << 23);
  return sign | static_cast<uint16_t>(rounded >> 13);
}

float BFloat16ToFloat(uint16_t bits) { return BitsFloat(static_cast<uint32_t>(bits) << 16); }

uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = FloatBits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  const uint32_t odd = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7FFFu + odd) >> 16);
}

}  // namespace convgate
