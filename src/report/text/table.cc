#include "report/text/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace convgate::report::internal {

std::string Short(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

std::string Setting(double value) {
  if (!std::isfinite(value)) return Short(value);
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.10g", value);
  return buffer;
}

}  // namespace convgate::report::internal
