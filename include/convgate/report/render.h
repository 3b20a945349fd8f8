// One Render per workflow: everything its result becomes, in every form, for the CLI to finish
// (result files under --out, the table or JSON on stdout, the error line on stderr).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "convgate/core/exit_code.h"
#include "convgate/gate/reduce.h"
#include "convgate/gate/results.h"
#include "convgate/gate/verify.h"
#include "convgate/report/report.h"

namespace convgate::report {

// report.json, verify_result.json, junit.xml and the console text of one result, with its error
// and the exit code it gives (gate::ExitCodeFor).
struct Rendering {
  nlohmann::json report;
  nlohmann::json verify_result;
  std::string junit;
  std::string console;
  std::optional<gate::GateError> error;
  ExitCode exit_code = ExitCode::kPassed;
  // verify: verify_result.json is written for every outcome, a usage error included (the other
  // files are not: nothing ran).
  bool verify_result_on_usage_error = false;
};

// `color` adds ANSI colours to the console text (only on a TTY). Never fails.
Rendering Render(const gate::RunReport& result, const Invocation& invocation, bool color);
Rendering Render(const gate::CompareReport& result, const Invocation& invocation, bool color);
Rendering Render(const gate::VerifyReport& result, const Invocation& invocation, bool color);
Rendering Render(const gate::BenchReport& result, const Invocation& invocation, bool color);
// reduce: its own report.json and console text; verify_result.json and junit.xml are those of the
// per-node comparison that located the node (a CI job reads them as a compare's).
Rendering Render(const gate::ReduceReport& result, const Invocation& invocation, bool color);
// pipeline: its own report.json and console text; verify_result.json and junit.xml are those of
// the pipeline outputs (compared step by step when nodes have targets, else their sanity run).
Rendering Render(const pipeline::PipelineReport& result, const Invocation& invocation, bool color);

}  // namespace convgate::report
