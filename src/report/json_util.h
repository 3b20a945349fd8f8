// Shared JSON building blocks for the report files.
#pragma once

#include <nlohmann/json.hpp>

#include "convgate/compare/tensor_compare.h"
#include "convgate/gate/results.h"
#include "convgate/report/report.h"

namespace convgate::report::internal {

// JSON has no NaN/Inf: those become the strings "nan", "inf", "-inf"; finite values stay numbers.
nlohmann::json Number(double value);
nlohmann::json SideJson(const gate::SideRecord& side);
nlohmann::json DatasetJson(const gate::DatasetRecord& dataset);
nlohmann::json ErrorJson(const std::optional<gate::GateError>& error);
nlohmann::json ValueSummaryJson(const compare::ValueSummary& values);
nlohmann::json ComparisonJson(const compare::TensorComparison& comparison);
nlohmann::json PolicyJson(const compare::Policy& policy);
// schema_version, tool, command, argv, host, started_at, seconds, verdict, exit_code.
nlohmann::json Header(const Invocation& invocation, gate::Verdict verdict, ExitCode exit_code);

}  // namespace convgate::report::internal
