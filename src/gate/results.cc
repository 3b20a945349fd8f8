#include "convgate/gate/results.h"

namespace convgate::gate {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kError:
      return "error";
  }
  return "error";
}

std::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kFlags:
      return "flags";
    case Stage::kLoad:
      return "load";
    case Stage::kInputs:
      return "inputs";
    case Stage::kRun:
      return "run";
    case Stage::kConvert:
      return "convert";
    case Stage::kWrite:
      return "write";
    case Stage::kInternal:
      return "internal";
  }
  return "internal";
}

ExitCode ExitCodeFor(const GateError& error) {
  if (error.stage == Stage::kFlags) return ExitCode::kUsage;
  if (error.stage == Stage::kInternal || error.status.code() == StatusCode::kInternal) {
    return ExitCode::kInternal;
  }
  return ExitCode::kCannotRun;
}

ExitCode ExitCodeFor(Verdict verdict, const std::optional<GateError>& error) {
  if (error.has_value()) return ExitCodeFor(*error);
  switch (verdict) {
    case Verdict::kPass:
      return ExitCode::kPassed;
    case Verdict::kFail:
      return ExitCode::kFailed;
    case Verdict::kError:
      return ExitCode::kInternal;  // an error verdict without an error record is a bug
  }
  return ExitCode::kInternal;
}

const OutputCheck* CompareReport::FirstFailure() const {
  for (const OutputCheck& check : checks) {
    if (!check.passed) return &check;
  }
  return nullptr;
}

const AgreementCheckResult* CompareReport::FirstAgreementFailure() const {
  for (const AgreementRecord& record : agreements) {
    for (const AgreementCheckResult& check : record.checks) {
      if (!check.passed) return &check;
    }
  }
  return nullptr;
}

}  // namespace convgate::gate
