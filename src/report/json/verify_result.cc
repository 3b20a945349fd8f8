// verify_result.json in the exact schema of OpenVINO's verify-conversion gate
// (../shared/reference/openvino-verify-conversion.txt): six fields, nothing more, so the
// orchestrators that consume that file consume ours unchanged.
#include "convgate/report/report.h"
#include "report/agreement_report.h"
#include "report/per_node_report.h"

namespace convgate::report {

using nlohmann::json;

namespace {

std::string DatasetPhrase(const gate::DatasetRecord& inputs) {
  std::string text =
      std::to_string(inputs.samples) + (inputs.samples == 1 ? " sample" : " samples");
  if (!inputs.origin.empty()) text += " (" + inputs.origin + ")";
  return text;
}

template <typename Check>
std::string FirstFailureText(const std::vector<Check>& checks) {
  for (const Check& check : checks) {
    if (!check.passed && !check.failures.empty()) {
      return "sample " + std::to_string(check.sample) + ", output '" + check.output +
             "': " + check.failures.front();
    }
  }
  return "";
}

template <typename Check>
size_t CountFailed(const std::vector<Check>& checks) {
  size_t failed = 0;
  for (const Check& check : checks) failed += check.passed ? 0 : 1;
  return failed;
}

// conversion_path: null for run/compare, which convert nothing; `convgate verify` fills it.
// task: null unless detected from the model (graph/task.h); never a guess.
json Assemble(bool verify_passed, bool e2e_passed, const std::string& detail,
              const std::string& error, const json& conversion_path = nullptr,
              const json& task = nullptr) {
  return json{{"verify_passed", verify_passed},
              {"e2e_passed", e2e_passed},
              {"conversion_path", conversion_path},
              {"task", task},
              {"e2e_detail", detail},
              {"error", error.empty() ? json(nullptr) : json(error)}};
}

std::string Text(const json& value) { return value.is_string() ? value.get<std::string>() : ""; }

// "hf" or "hf: text-generation-with-past on PyTorch (...), greedy, 8 new tokens": the backend and
// the settings that decide what it computed.
std::string BackendText(const gate::SideRecord& side) {
  return side.backend_settings.empty() ? side.backend : side.backend + ": " + side.backend_settings;
}

}  // namespace

json VerifyResultJson(const gate::RunReport& report) {
  const gate::SideRecord& model = report.model;
  std::string detail = model.backend + " " + model.backend_version + " ran " + model.path;
  if (!model.backend_settings.empty()) detail += " (" + model.backend_settings + ")";
  if (report.error) {
    return Assemble(false, false,
                    detail + ": stopped at " + std::string(gate::StageName(report.error->stage)),
                    report.error->status.message());
  }
  detail += " on " + DatasetPhrase(report.inputs) + "; checked " +
            std::to_string(report.checks.size()) +
            " output(s) for non-empty, no NaN/Inf, declared dtype and shape: " +
            std::to_string(CountFailed(report.checks)) + " failed";
  const bool passed = report.verdict == gate::Verdict::kPass;
  std::string error;
  if (!passed) {
    error = report.structure_failures.empty() ? FirstFailureText(report.checks)
                                              : report.structure_failures.front();
  }
  return Assemble(passed, passed, detail, error);
}

json VerifyResultJson(const gate::CompareReport& report) {
  const std::string sides = "source " + report.source.path + " (" + BackendText(report.source) +
                            ") vs target " + report.target.path + " (" +
                            BackendText(report.target) + ")";
  if (report.error) {
    // End-to-end inference passed unless the failure was in loading or running a side.
    const bool e2e = report.error->stage == gate::Stage::kWrite;
    return Assemble(false, e2e,
                    sides + ": stopped at " + std::string(gate::StageName(report.error->stage)),
                    report.error->status.message());
  }
  std::string detail = sides + " on " + DatasetPhrase(report.inputs) + "; compared " +
                       std::to_string(report.checks.size()) +
                       " output check(s): " + std::to_string(CountFailed(report.checks)) +
                       " failed, " + std::to_string(report.structure_failures.size()) +
                       " structure failure(s)";
  if (const std::string agreement = internal::AgreementDetail(report); !agreement.empty()) {
    detail += "; " + agreement;
  }
  // The target's end-to-end inference is sane unless it produced NaN/Inf the source did not.
  bool e2e = true;
  for (const gate::OutputCheck& check : report.checks) {
    if (check.comparison &&
        check.comparison->non_finite.introduced_nan + check.comparison->non_finite.introduced_inf >
            0) {
      e2e = false;
    }
  }
  const bool passed = report.verdict == gate::Verdict::kPass;
  std::string error;
  if (!passed) {
    error = report.structure_failures.empty() ? FirstFailureText(report.checks)
                                              : report.structure_failures.front();
    const gate::AgreementCheckResult* agreement = report.FirstAgreementFailure();
    if (error.empty() && agreement != nullptr) {
      error = "agreement check failed: " + agreement->message;
    }
    if (error.empty()) error = internal::PerNodeGateFailure(report);
  }
  return Assemble(passed, e2e, detail, error);
}

json VerifyResultJson(const gate::VerifyReport& report) {
  const json task = report.task ? json(report.task->task) : json(nullptr);
  const json path = report.conversion_path.empty() ? json(nullptr) : json(report.conversion_path);
  if (!report.conversion_passed) {
    const std::string error = report.error ? report.error->status.message() : "";
    return Assemble(false, false, "conversion of " + report.source + " failed; nothing ran", error,
                    path, task);
  }
  std::string detail = "target " + report.target + " (" + report.conversion_path + ")";
  std::string error;
  if (report.e2e) {
    const json e2e = VerifyResultJson(*report.e2e);
    detail += "; end-to-end: " + Text(e2e["e2e_detail"]);
    error = Text(e2e["error"]);
  }
  if (report.comparison) {
    const json compared = VerifyResultJson(*report.comparison);
    detail += "; comparison: " + Text(compared["e2e_detail"]);
    if (error.empty()) error = Text(compared["error"]);
  }
  if (report.task) detail += "; task: " + report.task->evidence;
  const bool passed = report.verdict == gate::Verdict::kPass;
  return Assemble(passed, report.e2e_passed(), detail, passed ? "" : error, path, task);
}

}  // namespace convgate::report
