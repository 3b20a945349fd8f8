// Fuzz target for `convgate check`: a report.json read back (ParseCompareReport), re-judged under
// the report's own policy (RejudgeCompareReport) and rendered in every form check writes
// (report.json, verify_result.json, junit.xml, the console table). What check writes must read
// back: a check of a check's report is how a report is re-judged twice.
//
// nlohmann_json is header-only, so the JSON parser itself is instrumented and fuzzed too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "convgate/gate/rejudge.h"
#include "convgate/report/json_text.h"
#include "convgate/report/read_report.h"
#include "convgate/report/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::gate::CompareReport> saved =
      convgate::report::ParseCompareReport(text, "fuzz.json");
  if (!saved.ok()) return 0;
  const convgate::gate::CompareReport rejudged =
      convgate::gate::RejudgeCompareReport(std::move(saved).value(), {}, "fuzz.json");
  convgate::report::Invocation invocation;
  invocation.command = "check";
  invocation.argv = {"check", "fuzz.json"};
  // Serialized as report::WriteResultFiles and --json do.
  const std::string report =
      convgate::report::DumpJson(convgate::report::ReportJson(rejudged, invocation));
  (void)convgate::report::DumpJson(convgate::report::VerifyResultJson(rejudged));
  (void)convgate::report::JUnitXml(rejudged, invocation);
  (void)convgate::report::ConsoleText(rejudged, /*color=*/true);
  if (rejudged.error) return 0;  // an error report is written, but check refuses to read it
  if (!convgate::report::ParseCompareReport(report, "rejudged.json").ok()) __builtin_trap();
  return 0;
}
