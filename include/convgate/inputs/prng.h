// convgate's own seeded PRNG. <random>'s distributions differ between standard libraries, so a seed
// would not reproduce the same inputs on another machine; this generator and its distributions are
// fully specified here and give the same stream everywhere (xoshiro256** seeded by splitmix64,
// uniform doubles from the top 53 bits, normals by the polar Box-Muller method).
//
// Not thread-safe: use one Prng per thread (DeriveSeed gives independent sub-streams).
#pragma once

#include <cstdint>

namespace convgate::inputs {

class Prng {
 public:
  // The four state words are the first four outputs of splitmix64 started at `seed`, as the
  // xoshiro authors recommend; any seed, including 0, gives a valid (non-zero) state.
  explicit Prng(uint64_t seed);

  // The next xoshiro256** output.
  uint64_t NextU64();
  // Uniform in [0, 1): the top 53 bits of NextU64() times 2^-53. One NextU64() per call.
  double NextDouble();
  // Uniform in [lo, hi), computed as lo + (hi - lo) * NextDouble() and kept below hi when rounding
  // would reach it. Returns lo when lo == hi. REQUIRES: lo <= hi, both finite.
  double Uniform(double lo, double hi);
  // `count` float32 values, each static_cast<float>(Uniform(lo, hi)) in turn: the same values,
  // with the generator inlined (generating a sample is then ~3x faster).
  void FillUniform(float* out, int64_t count, double lo, double hi);
  // Uniform integer in [lo, hi], inclusive both ends, unbiased (rejection sampling on NextU64()).
  // Any range, including [INT64_MIN, INT64_MAX], is valid. REQUIRES: lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
  // Standard normal N(0, 1) by Marsaglia's polar method: draw u, v = 2 * NextDouble() - 1 until
  // 0 < s = u^2 + v^2 < 1, then return u * sqrt(-2 ln(s) / s) and keep v * sqrt(-2 ln(s) / s) for
  // the next call. std::log is the only libm function involved, so streams agree bit for bit across
  // machines wherever log is correctly rounded (glibc's is within 0.52 ulp; a difference would be
  // in the last bit of a few values).
  double Normal();

 private:
  uint64_t state_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// A sub-stream seed for (seed, sample, input): generation of one input does not depend on how many
// values the other inputs drew, so adding an input to a model leaves the others' data unchanged.
// Each argument passes through the splitmix64 finalizer in turn:
// Mix(Mix(Mix(seed) ^ sample_index) ^ input_index).
uint64_t DeriveSeed(uint64_t seed, uint64_t sample_index, uint64_t input_index);

}  // namespace convgate::inputs
