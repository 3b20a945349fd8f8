// A benchmark in report.json ("benchmark": settings, machine, sides, speed), described once and
// read back through the same description (the store reads its figures from there).
#pragma once

#include <nlohmann/json.hpp>

#include "convgate/bench/records.h"
#include "report/json/reader.h"

namespace convgate::report::internal {

nlohmann::json BenchmarkJson(const bench::BenchmarkRecord& record);
// Throws BadField.
bench::BenchmarkRecord BenchmarkFromJson(const JsonFields& json);

}  // namespace convgate::report::internal
