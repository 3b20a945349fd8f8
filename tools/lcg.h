// A tiny fixed generator for the weights of generated test models: tests never depend on the
// values, only on their being the same on every machine and every run.
#pragma once

#include <cstdint>
#include <vector>

namespace convgate::tools {

class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  // Uniform in [-1, 1).
  float Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>((state_ >> 40) * (1.0 / (1 << 24))) * 2.0f - 1.0f;
  }
  std::vector<float> Vector(size_t n, float scale, float offset = 0.0f) {
    std::vector<float> values(n);
    for (float& v : values) v = offset + scale * Next();
    return values;
  }

 private:
  uint64_t state_;
};

}  // namespace convgate::tools
