// The sides and the inputs of a workflow in report.json ("model"; "source", "target"; "inputs"),
// each described once and read back by `convgate check` through the same description.
#pragma once

#include <nlohmann/json.hpp>

#include "convgate/gate/results.h"
#include "report/json/codec.h"

namespace convgate::report::internal {

nlohmann::json SideJson(const gate::SideRecord& side);
// Fields a side may lack (an older report, saved outputs) read back empty; outputs_saved_to is not
// read (a re-judged report saved no outputs). Throws BadField.
gate::SideRecord SideFromJson(const JsonFields& json);

nlohmann::json DatasetJson(const gate::DatasetRecord& dataset);
gate::DatasetRecord DatasetFromJson(const JsonFields& json);

}  // namespace convgate::report::internal
