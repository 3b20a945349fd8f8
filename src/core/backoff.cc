#include "convgate/core/backoff.h"

#include <algorithm>
#include <cmath>

namespace convgate {

double ExponentialBackoff(double base_seconds, double max_seconds, int retry, double jitter) {
  // ldexp with the exponent capped: 2^62 x any base is past every ceiling, without overflow.
  const double doubled = base_seconds * std::ldexp(1.0, std::clamp(retry, 0, 62));
  const double ceiling = std::max(0.0, std::min(max_seconds, doubled));
  return ceiling * std::clamp(jitter, 0.0, 1.0);
}

}  // namespace convgate
