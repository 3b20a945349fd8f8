// `convgate check REPORT.json`: a saved compare report re-judged under a new policy, without
// re-running either side; `check DIR` re-judges every job of a batch result (check_batch.h).
#include "cli/check_batch.h"
#include "cli/command.h"
#include "convgate/core/file_util.h"
#include "convgate/gate/rejudge.h"
#include "convgate/report/read_report.h"

namespace convgate::cli {
namespace {

// The report at `path` when a pipeline wrote it (its folder, or its report.json).
std::optional<nlohmann::json> PipelineReport(std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    if (!std::filesystem::is_regular_file(std::filesystem::path(path) / "report.json", error)) {
      return std::nullopt;
    }
    path = (std::filesystem::path(path) / "report.json").string();
  }
  Result<std::string> text = ReadFile(path, 1ll << 31);
  if (!text.ok()) return std::nullopt;
  nlohmann::json report = nlohmann::json::parse(*text, nullptr, false);
  if (!report.is_object() || !report.contains("command") || report["command"] != "pipeline") {
    return std::nullopt;
  }
  return report;
}

class CheckCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "check",
        "Re-judge a saved compare report.json (or every job of a batch result folder) under a "
        "new policy without re-running anything. "
        "Policy flags not given keep the report's values. Values the report does not hold "
        "exactly come from its error summaries; a check they cannot decide is 'indeterminate' "
        "and fails (re-run compare)");
    app->add_option("REPORT", report_,
                    "report.json written by `convgate compare` (or `verify`: its comparison; a "
                    "batch job's; a pipeline's: each of its comparisons), or a batch result "
                    "folder (or its summary.json): every job")
        ->required();
    AddToleranceFlags(flags_, policy_);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    if (IsBatchResult(report_)) return CheckBatchResult(report_, policy_, output_, invocation);
    if (std::optional<nlohmann::json> pipeline = PipelineReport(report_)) {
      return CheckPipelineResult(*pipeline, report_, policy_, output_, invocation);
    }
    report::Invocation saved_header;
    Result<gate::CompareReport> saved = report::ReadCompareReport(report_, &saved_header);
    if (!saved.ok()) {
      gate::CompareReport errored;
      errored.rejudged_from = report_;
      errored.error = gate::GateError{gate::Stage::kLoad, saved.status()};
      errored.verdict = gate::Verdict::kError;
      return RenderAndFinish(errored, invocation, output_);
    }
    // The re-judged models are the saved report's: where they came from stays in the result.
    invocation.model_origins = std::move(saved_header.model_origins);
    return RenderAndFinish(gate::RejudgeCompareReport(std::move(saved).value(), policy_, report_),
                           invocation, output_);
  }

 private:
  std::string report_;
  compare::Policy policy_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeCheckCommand() { return std::make_unique<CheckCommand>(); }

}  // namespace convgate::cli
