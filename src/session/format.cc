#include "convgate/session/format.h"

#include <cmath>

#include "convgate/core/numbers.h"

namespace convgate::session {

std::string CountOf(int64_t count, int64_t total) {
  const double percent = total > 0 ? 100.0 * static_cast<double>(count) / total : 0.0;
  return std::to_string(count) + " of " + std::to_string(total) + " elements (" +
         FormatSignificant(percent, 3) + "%)";
}

std::string Number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return FormatSignificant(value);
}

int64_t FirstIndexWhere(const Tensor& tensor, bool (*match)(double)) {
  for (int64_t idx = 0; idx < tensor.num_elements(); ++idx) {
    if (match(tensor.GetDouble(idx))) return idx;
  }
  return -1;
}

}  // namespace convgate::session
