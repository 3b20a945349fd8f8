// report.json and the console text of `convgate verify`: the conversion, the task, the target's
// end-to-end run and the comparison, each in the shape its own command writes.
#include "convgate/report/conversion.h"
#include "convgate/report/report.h"
#include "json_util.h"
#include "table.h"

namespace convgate::report {

using nlohmann::json;

json ReportJson(const gate::VerifyReport& report, const Invocation& invocation) {
  json out =
      internal::Header(invocation, report.verdict, gate::ExitCodeFor(report.verdict, report.error));
  out["error"] = internal::ErrorJson(report.error);
  out["source"] = report.source;
  out["target"] = report.target;
  out["conversion_path"] = report.conversion_path;
  out["conversion"] = report.conversion ? ConversionJson(*report.conversion) : json(nullptr);
  out["task"] = report.task ? json{{"task", report.task->task}, {"evidence", report.task->evidence}}
                            : json(nullptr);
  out["e2e_passed"] = report.e2e_passed();
  // The parts keep their own commands' layouts, so tools reading run/compare reports read these.
  out["e2e"] = report.e2e ? ReportJson(*report.e2e, invocation) : json(nullptr);
  out["comparison"] =
      report.comparison ? ReportJson(*report.comparison, invocation) : json(nullptr);
  return out;
}

std::string ConsoleText(const gate::VerifyReport& report, bool color) {
  std::string out = internal::Paint("convgate verify", internal::kBold, color) + "\n";
  out += "  source      " + report.source + "\n";
  out += "  conversion  " + report.conversion_path + "\n";
  if (report.conversion) {
    const convert::ConversionRecord& record = *report.conversion;
    out += "              " +
           (record.cache_hit ? std::string("cache hit")
                             : "converted in " + internal::Short(record.seconds) + " s") +
           (record.output_path.empty() ? "" : " -> " + record.output_path) + "\n";
    for (const std::string& note : record.notes) out += "              note: " + note + "\n";
  }
  out += "  task        " +
         (report.task ? report.task->task + " (" + report.task->evidence + ")" : "not detected") +
         "\n\n";
  if (report.e2e) out += "end-to-end on the target:\n" + ConsoleText(*report.e2e, color) + "\n";
  if (report.comparison) {
    out += "target against the source:\n" + ConsoleText(*report.comparison, color) + "\n";
  }
  const std::string verdict =
      report.verdict == gate::Verdict::kPass
          ? internal::Paint("VERIFY PASSED", internal::kGreen, color)
          : internal::Paint(
                report.verdict == gate::Verdict::kFail ? "VERIFY FAILED" : "VERIFY ERROR",
                report.verdict == gate::Verdict::kFail ? internal::kRed : internal::kYellow, color);
  out += verdict + ": conversion " + (report.conversion_passed ? "ok" : "failed") +
         ", end-to-end " + (report.e2e_passed() ? "ok" : (report.e2e ? "failed" : "not run")) +
         ", comparison " +
         (report.comparison ? std::string(gate::VerdictName(report.comparison->verdict))
                            : std::string("not run")) +
         "\n";
  return out;
}

}  // namespace convgate::report
