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

int ExitCodeFor(Verdict verdict, const std::optional<GateError>& error) {
  if (error.has_value()) {
    switch (error->stage) {
      case Stage::kFlags:
        return 2;
      case Stage::kInternal:
        return 4;
      default:
        return error->status.code() == StatusCode::kInternal ? 4 : 3;
    }
  }
  switch (verdict) {
    case Verdict::kPass:
      return 0;
    case Verdict::kFail:
      return 1;
    case Verdict::kError:
      return 4;  // an error verdict without an error record is a bug
  }
  return 4;
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
