// report.json back into a CompareReport, for `convgate check`.
#include "convgate/report/read_report.h"

#include <fstream>
#include <limits>
#include <map>
#include <string>

#include "convgate/core/file_util.h"
#include "convgate/report/report.h"
#include "json_reader.h"
#include "policy_json.h"

namespace convgate::report {
namespace {

using internal::BadField;
using internal::JsonFields;
using nlohmann::json;

std::string OptionalString(const JsonFields& json, std::string_view key) {
  return json.Has(key) && json.Raw(key).is_string() ? json.String(key) : "";
}

// A sample index or count, which the report's structs hold as int.
int SmallCount(const JsonFields& json, std::string_view key) {
  const int64_t count = json.Count(key);
  if (count > std::numeric_limits<int>::max()) json.Fail(key, "is out of range");
  return static_cast<int>(count);
}

gate::SideRecord SideFromJson(const JsonFields& json) {
  gate::SideRecord side;
  side.role = json.String("role");
  side.path = json.String("path");
  side.kind = OptionalString(json, "kind");
  side.format = OptionalString(json, "format");
  side.backend = OptionalString(json, "backend");
  side.backend_version = OptionalString(json, "backend_version");
  side.sha256 = OptionalString(json, "sha256");
  side.load_seconds = json.OptionalNumber("load_seconds").value_or(0.0);
  side.run_seconds = json.OptionalNumber("run_seconds").value_or(0.0);
  side.output_names = json.Strings("outputs");
  side.output_matching = OptionalString(json, "output_matching");
  if (json.Has("output_renames")) side.output_renames = json.Strings("output_renames");
  if (json.Has("notes")) side.notes = json.Strings("notes");
  side.backend_command = OptionalString(json, "backend_command");
  side.backend_log = OptionalString(json, "backend_log");
  return side;
}

gate::DatasetRecord DatasetFromJson(const JsonFields& json) {
  gate::DatasetRecord dataset;
  dataset.origin = json.String("origin");
  dataset.samples = SmallCount(json, "samples");
  for (const JsonFields& tensor : json.Objects("tensors")) {
    dataset.tensors.push_back(
        {tensor.String("name"), tensor.String("dtype"), tensor.Ints("shape")});
  }
  dataset.notes = json.Strings("notes");
  dataset.saved_to = OptionalString(json, "saved_to");
  return dataset;
}

// `policies`: the tolerance of the last result read for each output, for results that leave their
// policy out because it repeats it (schema 2).
gate::OutputCheck CheckFromJson(const JsonFields& json,
                                std::map<std::string, compare::Tolerance>& policies) {
  gate::OutputCheck check;
  check.sample = SmallCount(json, "sample");
  check.output = json.String("output");
  check.passed = json.OneOf("verdict", {"pass", "fail"}) == "pass";
  if (json.Has("failures")) check.failures = json.Strings("failures");
  if (json.Has("hints")) check.hints = json.Strings("hints");
  // Schema 1 repeated the policy's atol and rtol here; schema 2 keeps them in "policy" only.
  if (json.Has("atol")) {
    check.tolerance = {json.Number("atol"), json.Number("rtol")};
  } else if (json.Has("policy")) {
    const JsonFields policy = json.Object("policy");
    check.tolerance = {policy.Number("atol"), policy.Number("rtol")};
  } else if (const auto it = policies.find(check.output); it != policies.end()) {
    check.tolerance = it->second;
  } else {
    json.Fail("policy", "missing, and no earlier result of output '" + check.output + "' has one");
  }
  policies[check.output] = check.tolerance;
  if (!json.Raw("stats").is_null()) {
    check.comparison =
        internal::ComparisonFromJson(json.Object("stats"), check.failures, check.tolerance);
  }
  return check;
}

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
    root.Fail("error", "the report records an error (" + OptionalString(error, "stage") +
                           " stage): nothing was compared, so nothing can be re-judged");
  }
}

gate::CompareReport FromDocument(const json& document) {
  const JsonFields root(document, "");
  CheckHeader(root);
  gate::CompareReport report;
  report.source = SideFromJson(root.Object("source"));
  report.target = SideFromJson(root.Object("target"));
  report.inputs = DatasetFromJson(root.Object("inputs"));
  report.policy = internal::PolicyFromJson(root.Object("policy"));
  report.structure_failures = root.Strings("structure_failures");
  std::map<std::string, compare::Tolerance> policies;
  for (const JsonFields& result : root.Objects("results")) {
    report.checks.push_back(CheckFromJson(result, policies));
  }
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
