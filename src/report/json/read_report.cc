// report.json back into the report of its workflow, each record read through the one description
// it was written with (json/report_json.cc); for `convgate check`, a compare report that compared
// (or the comparison inside a verify report).
#include "convgate/report/read_report.h"

#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include "convgate/core/file_util.h"
#include "convgate/report/report.h"
#include "report/json/reader.h"
#include "report/json/report_json.h"

namespace convgate::report {
namespace {

using internal::BadField;
using internal::JsonFields;
using nlohmann::json;

// What `convgate check` needs beyond a readable report: a compare report that compared (verify
// writes its comparison with its own command name).
void CheckComparedReport(const JsonFields& root, bool in_verify) {
  internal::CheckSchema(root);
  const std::string command = root.String("command");
  if (command != "compare" && command != "check" && !(in_verify && command == "verify")) {
    root.Fail("command", "'" + command + "': not a compare report");
  }
  if (root.Has("error") && !root.Raw("error").is_null()) {
    const JsonFields error = root.Object("error");
    const std::string stage =
        error.Has("stage") && error.Raw("stage").is_string() ? error.String("stage") : "";
    root.Fail("error", "the report records an error (" + stage +
                           " stage): nothing was compared, so nothing can be re-judged");
  }
  root.OneOf("verdict", {"pass", "fail"});
}

// `text` parsed and read by `read`; a BadField or a JSON error becomes DataLoss naming `what`.
template <typename Read>
auto Parse(std::string_view text, std::string_view what, Read read)
    -> Result<decltype(read(std::declval<const JsonFields&>()))> {
  const std::string name(what);
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& e) {
    return Status::DataLoss(name + ": not a JSON report (" + e.what() + ")");
  }
  // The field readers throw BadField; this is where it stops.
  try {
    internal::RestoreEscapedStrings(document);
    return read(JsonFields(document, ""));
  } catch (const BadField& bad) {
    return Status::DataLoss(name + ": " + (bad.path.empty() ? "" : bad.path + ": ") + bad.what);
  } catch (const json::exception& e) {
    return Status::DataLoss(name + ": malformed report (" + std::string(e.what()) + ")");
  }
}

template <typename Report>
Report ReportFromJson(const JsonFields& root, Invocation& invocation) {
  if constexpr (std::is_same_v<Report, gate::RunReport>) {
    return internal::RunReportFromJson(root, invocation);
  } else if constexpr (std::is_same_v<Report, gate::CompareReport>) {
    return internal::CompareReportFromJson(root, invocation);
  } else if constexpr (std::is_same_v<Report, gate::VerifyReport>) {
    return internal::VerifyReportFromJson(root, invocation);
  } else if constexpr (std::is_same_v<Report, gate::BenchReport>) {
    return internal::BenchReportFromJson(root, invocation);
  } else {
    return internal::ReduceReportFromJson(root, invocation);
  }
}

}  // namespace

Result<gate::CompareReport> ParseCompareReport(std::string_view text, std::string_view what,
                                               Invocation* header) {
  return Parse(text, what, [&](const JsonFields& top) {
    // verify's report.json holds its comparison as a whole compare report: re-judge that.
    const bool verify = top.Has("command") && top.Raw("command") == "verify" &&
                        top.Has("comparison") && top.Raw("comparison").is_object();
    const JsonFields root = verify ? top.Object("comparison") : top;
    CheckComparedReport(root, verify);
    Invocation invocation;
    gate::CompareReport report = internal::CompareReportFromJson(root, invocation);
    if (header) *header = std::move(invocation);
    return report;
  });
}

template <typename Report>
Result<Report> ParseReport(std::string_view text, std::string_view what, Invocation* invocation) {
  return Parse(text, what, [&](const JsonFields& root) {
    Invocation header;
    Report report = ReportFromJson<Report>(root, header);
    if (invocation) *invocation = std::move(header);
    return report;
  });
}

template Result<gate::RunReport> ParseReport(std::string_view, std::string_view, Invocation*);
template Result<gate::CompareReport> ParseReport(std::string_view, std::string_view, Invocation*);
template Result<gate::VerifyReport> ParseReport(std::string_view, std::string_view, Invocation*);
template Result<gate::ReduceReport> ParseReport(std::string_view, std::string_view, Invocation*);
template Result<gate::BenchReport> ParseReport(std::string_view, std::string_view, Invocation*);

Result<gate::CompareReport> ReadCompareReport(const std::filesystem::path& path,
                                              Invocation* header) {
  const std::string name = path.string();
  std::error_code error;
  // Only a missing path is "no such report": a FIFO or a device is named as such by ReadFile,
  // which also caps a report at kMaxTextFileBytes.
  if (!std::filesystem::exists(path, error)) {
    return Status::NotFound(name + ": no such report file");
  }
  CONVGATE_ASSIGN_OR_RETURN(const std::string text,
                            ReadFile(path, kMaxTextFileBytes, "a JSON file"));
  return ParseCompareReport(text, name, header);
}

}  // namespace convgate::report
