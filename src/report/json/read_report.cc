// report.json back into a CompareReport, for `convgate check`: the header checked, each record
// read through its one description (json/*.h).
#include "convgate/report/read_report.h"

#include <fstream>
#include <limits>
#include <map>
#include <string>

#include "convgate/core/file_util.h"
#include "convgate/report/report.h"
#include "report/agreement_report.h"
#include "report/json/policy.h"
#include "report/json/reader.h"
#include "report/json/results.h"
#include "report/json/side.h"

namespace convgate::report {
namespace {

using internal::BadField;
using internal::JsonFields;
using nlohmann::json;

// The header must say: this schema, a compare (or re-judged) report, and no error.
void CheckHeader(const JsonFields& root) {
  const int64_t schema = root.Int("schema_version");
  if (schema < kOldestReadableSchema || schema > kSchemaVersion) {
    root.Fail("schema_version", "is " + std::to_string(schema) + ", but this convgate reads " +
                                    std::to_string(kOldestReadableSchema) + " to " +
                                    std::to_string(kSchemaVersion));
  }
  const std::string command = root.String("command");
  if (command != "compare" && command != "check") {
    root.Fail("command", "'" + command + "': not a compare report");
  }
  if (root.Has("error") && !root.Raw("error").is_null()) {
    const JsonFields error = root.Object("error");
    const std::string stage =
        error.Has("stage") && error.Raw("stage").is_string() ? error.String("stage") : "";
    root.Fail("error", "the report records an error (" + stage +
                           " stage): nothing was compared, so nothing can be re-judged");
  }
}

gate::CompareReport FromDocument(const json& document) {
  const JsonFields root(document, "");
  CheckHeader(root);
  gate::CompareReport report;
  report.source = internal::SideFromJson(root.Object("source"));
  report.target = internal::SideFromJson(root.Object("target"));
  report.inputs = internal::DatasetFromJson(root.Object("inputs"));
  report.policy = internal::PolicyFromJson(root.Object("policy"));
  report.structure_failures = root.Strings("structure_failures");
  report.rejudged_from = root.Has("rejudged_from") ? root.String("rejudged_from") : "";
  report.checks = internal::CompareResultsFromJson(root);
  report.aggregates = internal::AggregatesFromJson(root, report.checks);
  report.agreements = internal::AgreementsFromJson(root);
  const std::string verdict = root.OneOf("verdict", {"pass", "fail"});
  report.verdict = verdict == "pass" ? gate::Verdict::kPass : gate::Verdict::kFail;
  return report;
}

}  // namespace

Result<gate::CompareReport> ParseCompareReport(std::string_view text, std::string_view what) {
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
    return FromDocument(document);
  } catch (const BadField& bad) {
    return Status::DataLoss(name + ": " + (bad.path.empty() ? "" : bad.path + ": ") + bad.what);
  } catch (const json::exception& e) {
    return Status::DataLoss(name + ": malformed report (" + std::string(e.what()) + ")");
  }
}

Result<gate::CompareReport> ReadCompareReport(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code error;
  // Only a missing path is "no such report": a FIFO or a device is named as such by ReadFile,
  // which also caps a report at kMaxTextFileBytes.
  if (!std::filesystem::exists(path, error)) {
    return Status::NotFound(name + ": no such report file");
  }
  CONVGATE_ASSIGN_OR_RETURN(const std::string text,
                            ReadFile(path, kMaxTextFileBytes, "a JSON file"));
  return ParseCompareReport(text, name);
}

}  // namespace convgate::report
