// convgate's own seeded PRNG. <random>'s distributions differ between standard libraries, so a seed
// would not reproduce the same inputs on another machine; this generator and its distributions are
// fully specified here and give the same stream everywhere (xoshiro256** seeded by splitmix64,
// uniform doubles from the top 53 bits, normals by Box-Muller).
#pragma once

#include <cstdint>

namespace convgate::inputs {

class Prng {
 public:
  explicit Prng(uint64_t seed);

  uint64_t NextU64();
  // Uniform in [0, 1).
  double NextDouble();
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi);
  // Uniform integer in [lo, hi], inclusive both ends, unbiased (rejection sampling).
  // REQUIRES: lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
  // Standard normal N(0, 1).
  double Normal();

 private:
  uint64_t state_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// A sub-stream seed for (seed, sample, input): generation of one input does not depend on how many
// values the other inputs drew, so adding an input to a model leaves the others' data unchanged.
uint64_t DeriveSeed(uint64_t seed, uint64_t sample_index, uint64_t input_index);

}  // namespace convgate::inputs
