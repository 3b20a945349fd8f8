// report.json of each workflow read back whole, through the descriptions ReportJson
// (convgate/report/report.h) writes with: the header into `invocation`, the rest into the report.
// Throws BadField.
#pragma once

#include "convgate/gate/reduce.h"
#include "convgate/gate/results.h"
#include "convgate/gate/verify.h"
#include "convgate/report/report.h"
#include "report/json/reader.h"

namespace convgate::report::internal {

// schema_version must be one this convgate reads.
void CheckSchema(const JsonFields& root);

gate::RunReport RunReportFromJson(const JsonFields& root, Invocation& invocation);
gate::CompareReport CompareReportFromJson(const JsonFields& root, Invocation& invocation);
gate::VerifyReport VerifyReportFromJson(const JsonFields& root, Invocation& invocation);
gate::ReduceReport ReduceReportFromJson(const JsonFields& root, Invocation& invocation);
gate::BenchReport BenchReportFromJson(const JsonFields& root, Invocation& invocation);

}  // namespace convgate::report::internal
