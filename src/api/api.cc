// convgate/convgate.h: the in-process API, a thin translation of its requests into the gate's
// options (gate/workflows.h, gate/verify.h) and of the gate's reports into its outcomes. The
// report rendering is the command line's (report/report.h), so both say the same thing.
#include <chrono>
#include <exception>
#include <filesystem>

#include "convgate/convgate.h"
#include "convgate/core/exit_code.h"
#include "convgate/gate/verify.h"
#include "convgate/gate/workflows.h"
#include "convgate/report/json_text.h"
#include "convgate/report/report.h"
#include "convgate/version.h"

namespace convgate::v1 {
namespace {

void ApplyInputs(const Inputs& inputs, gate::DataOptions& data) {
  data.generate.samples = inputs.samples;
  data.generate.seed = inputs.seed;
  data.generate.dim_per_symbol = inputs.dims;
  if (!inputs.load_inputs.empty()) data.load_inputs = inputs.load_inputs;
}

void ApplyTolerances(const Tolerances& tolerances, compare::Policy& policy) {
  if (tolerances.atol) policy.global.atol = *tolerances.atol;
  if (tolerances.rtol) policy.global.rtol = *tolerances.rtol;
}

std::vector<Check> ChecksOf(const gate::CompareReport& report) {
  std::vector<Check> checks;
  for (const gate::OutputCheck& check : report.checks) {
    Check out;
    out.sample = check.sample;
    out.output = check.output;
    out.passed = check.passed;
    if (check.comparison) {
      out.max_abs_diff = check.comparison->errors.max_abs_error;
      out.max_rel_diff = check.comparison->errors.max_rel_error;
    }
    out.mismatches = check.mismatches.hi;
    out.failures = check.failures;
    checks.push_back(std::move(out));
  }
  return checks;
}

// The outcome of a finished workflow: the verdict, the error, the rendered report, and the result
// files in out_dir when one was asked for (a file that cannot be written is the outcome's error).
template <typename Report>
Outcome Finish(const Report& report, const report::Invocation& invocation,
               const std::string& out_dir) {
  Outcome outcome;
  outcome.verdict = std::string(gate::VerdictName(report.verdict));
  outcome.exit_code = static_cast<int>(gate::ExitCodeFor(report.verdict, report.error));
  if (report.error) outcome.error = report::ErrorLine(*report.error);
  const nlohmann::json document = report::ReportJson(report, invocation);
  outcome.report_json = report::DumpJson(document);
  outcome.console_text = report::ConsoleText(report, /*color=*/false);
  if (!out_dir.empty()) {
    Status written = report::WriteResultFiles(out_dir, document, report::VerifyResultJson(report),
                                              report::JUnitXml(report, invocation));
    if (!written.ok()) {
      outcome.exit_code = static_cast<int>(ExitCode::kCannotRun);
      outcome.verdict = "error";
      outcome.error = "write: " + written.message();
    }
  }
  return outcome;
}

report::Invocation InvocationOf(const std::string& command) {
  report::Invocation invocation;
  invocation.command = command;
  invocation.argv = {"convgate::v1::" + command};
  invocation.started_at = report::UtcNow();
  return invocation;
}

// Nothing escapes the API as an exception: a bug is exit 4 with its message.
template <typename Call>
Outcome Guarded(const Call& call) {
  try {
    return call();
  } catch (const std::exception& error) {
    Outcome outcome;
    outcome.verdict = "error";
    outcome.error = std::string("internal: ") + error.what();
    return outcome;
  }
}

}  // namespace

Outcome Compare(const CompareRequest& request) {
  return Guarded([&] {
    gate::CompareOptions options;
    options.source = request.source;
    options.target = request.target;
    options.source_backend = request.source_backend;
    options.target_backend = request.target_backend;
    ApplyInputs(request.inputs, options.data);
    ApplyTolerances(request.tolerances, options.policy);
    report::Invocation invocation = InvocationOf("compare");
    const auto start = std::chrono::steady_clock::now();
    const gate::CompareReport report = gate::CompareModelsGate(options);
    invocation.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Outcome outcome = Finish(report, invocation, request.out_dir);
    outcome.checks = ChecksOf(report);
    return outcome;
  });
}

Outcome Verify(const VerifyRequest& request) {
  return Guarded([&] {
    gate::VerifyOptions options;
    options.source = request.source;
    options.target = request.target;
    options.conversion.kind = request.to;
    options.conversion.params = request.params;
    options.conversion.use_cache = request.use_cache;
    options.compare.calibration.enabled = true;  // as verify measures the noise floor
    options.compare.calibration.use_cache = request.use_cache;
    ApplyInputs(request.inputs, options.compare.data);
    ApplyTolerances(request.tolerances, options.compare.policy);
    report::Invocation invocation = InvocationOf("verify");
    Status valid = gate::CheckVerifyOptions(options);
    gate::VerifyReport report;
    if (!valid.ok()) {
      report.source = request.source;
      report.error = gate::GateError{gate::Stage::kFlags, valid};
    } else {
      const auto start = std::chrono::steady_clock::now();
      report = gate::VerifyGate(options);
      invocation.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    Outcome outcome = Finish(report, invocation, request.out_dir);
    if (report.comparison) outcome.checks = ChecksOf(*report.comparison);
    return outcome;
  });
}

std::string Version() { return std::string(kVersion) + " (" + kBuildCommit + ")"; }

}  // namespace convgate::v1
