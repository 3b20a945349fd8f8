#include "convgate/session/records.h"

namespace convgate::session {

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

}  // namespace convgate::session
