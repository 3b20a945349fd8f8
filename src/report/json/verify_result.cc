// verify_result.json in the exact schema of OpenVINO's verify-conversion gate
// (docs/openvino.md): six fields, nothing more, so the
// orchestrators that consume that file consume ours unchanged.
#include <filesystem>

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

constexpr char kUsageErrorDetail[] = "Nothing ran: the request was refused as a usage error.";

std::string Text(const json& value) { return value.is_string() ? value.get<std::string>() : ""; }

// "hf" or "hf (text-generation-with-past on PyTorch (...), greedy, 8 new tokens)": the backend and
// the settings that decide what it computed.
std::string BackendText(const gate::SideRecord& side) {
  return side.backend_settings.empty() ? side.backend
                                       : side.backend + " (" + side.backend_settings + ")";
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

json VerifyResultJson(const gate::BenchReport& report) {
  std::string detail = "benchmarked " + report.source.path;
  if (report.target) detail += " against " + report.target->path;
  if (report.error) {
    return Assemble(false, false,
                    detail + ": stopped at " + std::string(gate::StageName(report.error->stage)),
                    report.error->status.message());
  }
  for (const bench::SideBenchmark& side : report.benchmark.sides) {
    detail += "; " + side.role + " " + bench::DescribeSide(side);
  }
  if (report.benchmark.speed) {
    detail += "; the target is " + bench::DescribeSpeedup(*report.benchmark.speed);
  }
  const bool passed = report.verdict == gate::Verdict::kPass;
  return Assemble(passed, true, detail, report.failures.empty() ? "" : report.failures.front());
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

json VerifyUsageErrorJson(const std::string& message) {
  return Assemble(false, false, kUsageErrorDetail, message);
}

namespace {

// The last component of a path ("out/model.xml" -> "model.xml"; a folder keeps its name).
std::string FileName(const std::string& path) {
  std::filesystem::path name = std::filesystem::path(path).filename();
  if (name.empty()) name = std::filesystem::path(path).parent_path().filename();
  return name.empty() ? path : name.string();
}

std::string SamplesPhrase(const gate::DatasetRecord& inputs) {
  return std::to_string(inputs.samples) + (inputs.samples == 1 ? " sample" : " samples");
}

}  // namespace

// verify's e2e_detail: one sentence saying what was converted how, where the target ran on how
// many samples, and how its outputs held up on their own and against the source; the details
// (paths, versions, settings of the comparison) are report.json's.
json VerifyResultJson(const gate::VerifyReport& report) {
  const json task = report.task ? json(report.task->task) : json(nullptr);
  const json path = report.conversion_path.empty() ? json(nullptr) : json(report.conversion_path);
  if (report.error && report.error->stage == gate::Stage::kFlags) {
    return Assemble(false, false, kUsageErrorDetail, report.error->status.message(), path, task);
  }
  const std::string error_text = report.error ? report.error->status.message() : "";
  if (!report.conversion_passed && !report.conversion && report.conversion_path.empty() &&
      report.error && report.error->stage == gate::Stage::kLoad) {
    // Nothing was chosen to convert: the source itself (a Hub id, an hf:// file) could not be had.
    return Assemble(false, false,
                    "Could not get the source " + report.source + "; nothing was converted or run.",
                    error_text, path, task);
  }
  if (!report.conversion_passed) {
    const std::string& error = error_text;
    const std::string with =
        report.conversion_path.empty() ? "" : " with " + report.conversion_path;
    return Assemble(false, false,
                    "Converting " + FileName(report.source) + with + " failed; nothing ran.", error,
                    path, task);
  }
  std::string detail = report.conversion_path == "given"
                           ? "Took the given target " + FileName(report.target)
                           : "Converted " + FileName(report.source) + " with " +
                                 report.conversion_path + " to " + FileName(report.target);
  std::string error;
  if (report.e2e) {
    const gate::RunReport& run = *report.e2e;
    if (run.error) {
      detail += ", but its run on " + run.model.backend + " stopped at " +
                std::string(gate::StageName(run.error->stage));
    } else {
      detail += " and ran it on " + BackendText(run.model) + " over " + SamplesPhrase(run.inputs) +
                ": " + std::to_string(run.checks.size() - CountFailed(run.checks)) + " of " +
                std::to_string(run.checks.size()) +
                " output check(s) sane (non-empty, no NaN/Inf, declared dtype and shape)";
    }
    error = Text(VerifyResultJson(run)["error"]);
  }
  if (report.comparison) {
    const gate::CompareReport& compared = *report.comparison;
    if (compared.error) {
      detail += "; the comparison with the source stopped at " +
                std::string(gate::StageName(compared.error->stage));
    } else {
      detail += "; against the source on " + compared.source.backend + ", " +
                std::to_string(compared.checks.size() - CountFailed(compared.checks)) + " of " +
                std::to_string(compared.checks.size()) + " output check(s) matched";
      if (!compared.structure_failures.empty()) {
        detail +=
            ", " + std::to_string(compared.structure_failures.size()) + " structure failure(s)";
      }
      if (const std::string agreement = internal::AgreementDetail(compared); !agreement.empty()) {
        detail += ", " + agreement;
      }
    }
    if (error.empty()) error = Text(VerifyResultJson(compared)["error"]);
  }
  const bool passed = report.verdict == gate::Verdict::kPass;
  return Assemble(passed, report.e2e_passed(), detail + ".", passed ? "" : error, path, task);
}

}  // namespace convgate::report
