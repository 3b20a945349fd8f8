#include "convgate/gate/results.h"

namespace convgate::gate {

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
