// The tolerance policy in report.json: everything given, every default in force and the rules, so
// a reader (or `convgate check`) knows exactly what was applied; and each result's resolved
// policy. Each record is described once and read back through the same description.
#pragma once

#include <nlohmann/json.hpp>

#include "convgate/compare/policy.h"
#include "report/json/codec.h"

namespace convgate::report::internal {

nlohmann::json PolicyJson(const compare::Policy& policy);
// The policy as PolicyJson wrote it. Reports written before the full policy was recorded carry
// only atol, rtol and per-output atol/rtol; those read back as explicit settings. Throws BadField.
compare::Policy PolicyFromJson(const JsonFields& json);

// Only the knobs that are set.
nlohmann::json PolicySettingsJson(const compare::PolicySettings& settings);

// One result's resolved policy: every knob's value and where atol and rtol came from.
nlohmann::json OutputPolicyJson(const compare::OutputPolicy& policy);
// Knobs an older report's result lacks read back as OutputPolicy's defaults; atol and rtol are
// required.
compare::OutputPolicy OutputPolicyFromJson(const JsonFields& json);

}  // namespace convgate::report::internal
