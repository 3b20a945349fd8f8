// `convgate check REPORT.json`: a saved compare report re-judged under a new policy, without
// re-running either side.
#include "command.h"
#include "convgate/gate/rejudge.h"
#include "convgate/report/read_report.h"

namespace convgate::cli {
namespace {

class CheckCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "check",
        "Re-judge a saved compare report.json under a new policy without re-running anything. "
        "Policy flags not given keep the report's values. Values the report does not hold "
        "exactly come from its error histograms; a check they cannot decide is "
        "'indeterminate' and fails (re-run compare)");
    app->add_option("REPORT", report_, "report.json written by `convgate compare`")->required();
    AddToleranceFlags(*app, tolerance_);
    AddOutputFlags(*app, output_);
    return app;
  }

  int Execute(report::Invocation& invocation) override {
    Result<compare::Policy> policy = ToPolicy(tolerance_);
    if (!policy.ok()) return UsageError(policy.status());
    Result<gate::CompareReport> saved = report::ReadCompareReport(report_);
    if (!saved.ok()) {
      gate::CompareReport errored;
      errored.rejudged_from = report_;
      errored.error = gate::GateError{gate::Stage::kLoad, saved.status()};
      errored.verdict = gate::Verdict::kError;
      return RenderAndFinish(errored, invocation, output_);
    }
    return RenderAndFinish(gate::RejudgeCompareReport(std::move(saved).value(), *policy, report_),
                           invocation, output_);
  }

 private:
  std::string report_;
  ToleranceFlags tolerance_;
  OutputFlags output_;
};

}  // namespace

std::unique_ptr<Command> MakeCheckCommand() { return std::make_unique<CheckCommand>(); }

}  // namespace convgate::cli
