// A tiny seeded generator for the compare tests and benchmarks: SplitMix64 (Steele, Lea, Flood
// 2014), our own because <random> distributions differ across standard libraries (docs/
// architecture.md, rule 6) and the data must be the same everywhere.
#pragma once

#include <cstdint>

namespace convgate::compare {

class TestRng {
 public:
  explicit TestRng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }

 private:
  uint64_t state_;
};

}  // namespace convgate::compare
