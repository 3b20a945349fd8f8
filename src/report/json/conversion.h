// A conversion record read back (verify's "conversion" in report.json) through the description
// ConversionJson (convgate/report/conversion.h) writes with.
#pragma once

#include "convgate/convert/convert.h"
#include "report/json/codec.h"

namespace convgate::report::internal {

// The output's path and size are null, and read back empty, when there is no output (no hash);
// output_hold is not recorded. Throws BadField.
convert::ConversionRecord ConversionFromJson(const JsonFields& json);

}  // namespace convgate::report::internal
