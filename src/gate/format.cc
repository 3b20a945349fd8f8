#include "format.h"

#include <cmath>
#include <cstdio>

namespace convgate::gate::internal {

std::string CountOf(int64_t count, int64_t total) {
  const double percent = total > 0 ? 100.0 * static_cast<double>(count) / total : 0.0;
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3g%%", percent);
  return std::to_string(count) + " of " + std::to_string(total) + " elements (" + buffer + ")";
}

std::string Number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

int64_t FirstIndexWhere(const Tensor& tensor, bool (*match)(double)) {
  for (int64_t idx = 0; idx < tensor.num_elements(); ++idx) {
    if (match(tensor.GetDouble(idx))) return idx;
  }
  return -1;
}

}  // namespace convgate::gate::internal
