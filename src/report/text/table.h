// Number formats of the console text (the table itself is core/text_table.h).
#pragma once

#include <string>
#include <vector>

#include "convgate/core/text_table.h"

namespace convgate::report::internal {

// The console's table and colours live in core (core/text_table.h), shared with batch and the
// command line.
using Table = ::convgate::TextTable;
using ::convgate::kBold;
using ::convgate::kGreen;
using ::convgate::kRed;
using ::convgate::kReset;
using ::convgate::kYellow;
using ::convgate::Paint;

// "1.23e-05"-style short number; "nan"/"inf" spelled out.
std::string Short(double value);
// A value the user set (a tolerance, a floor), shown as given: up to 10 significant digits, so
// min_cosine 0.9995 does not read as 1.
std::string Setting(double value);

}  // namespace convgate::report::internal
