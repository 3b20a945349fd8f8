#include "convgate/inputs/prng.h"

#include <cmath>
#include <limits>

namespace convgate::inputs {
namespace {

// Constants from Vigna's splitmix64.c (https://prng.di.unimi.it/splitmix64.c).
constexpr uint64_t kSplitMixIncrement = 0x9e3779b97f4a7c15;

uint64_t SplitMixFinalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

// One splitmix64 step as a pure function of its input: the generator's state advance followed by
// its output function.
uint64_t Mix(uint64_t x) { return SplitMixFinalize(x + kSplitMixIncrement); }

uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Prng::Prng(uint64_t seed) {
  uint64_t splitmix_state = seed;
  for (uint64_t& word : state_) {
    splitmix_state += kSplitMixIncrement;
    word = SplitMixFinalize(splitmix_state);
  }
}

// xoshiro256** 1.0 (https://prng.di.unimi.it/xoshiro256starstar.c).
uint64_t Prng::NextU64() {
  const uint64_t result = RotateLeft(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = RotateLeft(state_[3], 45);
  return result;
}

// 53 bits fill a double's significand exactly, so every value k * 2^-53 is equally likely.
double Prng::NextDouble() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

double Prng::Uniform(double lo, double hi) {
  if (!(lo < hi)) return lo;
  const double u = NextDouble();
  double value = lo + (hi - lo) * u;
  // hi - lo overflows to +inf for ranges wider than DBL_MAX; interpolate without the difference.
  if (!std::isfinite(value)) value = lo * (1.0 - u) + hi * u;
  // Rounding can land on hi (or, for huge ranges, a hair outside); the contract is [lo, hi).
  if (value >= hi) value = std::nextafter(hi, lo);
  if (value < lo) value = lo;
  return value;
}

void Prng::FillUniform(float* out, int64_t count, double lo, double hi) {
  for (int64_t idx = 0; idx < count; ++idx) out[idx] = static_cast<float>(Uniform(lo, hi));
}

int64_t Prng::UniformInt(int64_t lo, int64_t hi) {
  // Unsigned arithmetic wraps, so hi - lo is exact even for [INT64_MIN, INT64_MAX].
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == std::numeric_limits<uint64_t>::max()) return static_cast<int64_t>(NextU64());
  const uint64_t count = span + 1;
  // 2^64 mod count: draws below it are the incomplete last block of the modulo and are rejected,
  // so every residue has the same number of preimages. Rejection probability < count / 2^64.
  const uint64_t threshold = (0 - count) % count;
  uint64_t draw = NextU64();
  while (draw < threshold) draw = NextU64();
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + draw % count);
}

double Prng::Normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  double u = 0.0;
  double v = 0.0;
  double s = 0.0;
  do {
    u = 2.0 * NextDouble() - 1.0;
    v = 2.0 * NextDouble() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double scale = std::sqrt(-2.0 * std::log(s) / s);
  spare_normal_ = v * scale;
  has_spare_normal_ = true;
  return u * scale;
}

uint64_t DeriveSeed(uint64_t seed, uint64_t sample_index, uint64_t input_index) {
  return Mix(Mix(Mix(seed) ^ sample_index) ^ input_index);
}

}  // namespace convgate::inputs
