// A subcommand: registers its flags, then executes with them. One file per subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "convgate/gate/results.h"
#include "convgate/report/report.h"
#include "flags.h"

namespace convgate::cli {

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand and its flags to `parent` and returns it.
  virtual CLI::App* Register(CLI::App& parent) = 0;
  // Runs after a successful parse. Returns the process exit code.
  virtual int Execute(report::Invocation& invocation) = 0;
};

std::unique_ptr<Command> MakeInspectCommand();
std::unique_ptr<Command> MakeRunCommand();
std::unique_ptr<Command> MakeCompareCommand();
std::unique_ptr<Command> MakeCheckCommand();
std::unique_ptr<Command> MakeConvertCommand();
std::unique_ptr<Command> MakeCacheCommand();
std::unique_ptr<Command> MakeVerifyCommand();
std::unique_ptr<Command> MakeTransformCommand();
std::unique_ptr<Command> MakeReduceCommand();

// Seconds since the process started (the figure reports give as the invocation's duration).
double ProcessSeconds();

// Prints "convgate: <message>" to stderr and returns 2 (usage).
int UsageError(const Status& status);

// Everything a gate workflow renders, finished uniformly: result files under --out, the table or
// JSON on stdout, the error line on stderr. Returns the exit code (3 if a result file could not
// be written).
struct Rendered {
  nlohmann::json report;
  nlohmann::json verify_result;
  std::string junit;
  std::string console;
  std::optional<gate::GateError> error;
  int exit_code = 0;
};
int Finish(const OutputFlags& flags, const Rendered& rendered);

// Renders a workflow's report in every form and finishes (see Finish). Report is
// gate::RunReport or gate::CompareReport.
template <typename Report>
int RenderAndFinish(const Report& result, report::Invocation& invocation,
                    const OutputFlags& flags) {
  invocation.seconds = ProcessSeconds();
  Rendered rendered;
  rendered.report = report::ReportJson(result, invocation);
  rendered.verify_result = report::VerifyResultJson(result);
  rendered.junit = report::JUnitXml(result, invocation);
  rendered.console = report::ConsoleText(result, UseColor(flags));
  rendered.error = result.error;
  rendered.exit_code = gate::ExitCodeFor(result.verdict, result.error);
  return Finish(flags, rendered);
}

}  // namespace convgate::cli
