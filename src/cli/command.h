// A subcommand: its positional arguments and flags (a FlagSet built from the groups in
// flag_groups.h), and what it does once they are valid. One file per subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/flag.h"
#include "cli/flag_groups.h"
#include "convgate/core/exit_code.h"
#include "convgate/gate/results.h"
#include "convgate/report/render.h"
#include "convgate/report/report.h"

namespace convgate::cli {

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand with its positionals and flags to `parent` and returns it.
  virtual CLI::App* Register(CLI::App& parent) = 0;
  // Runs after a successful parse and ApplyFlags(). Returns the process exit code.
  virtual ExitCode Execute(report::Invocation& invocation) = 0;

  // Every flag set the command registered (a command with subcommands has one per subcommand).
  virtual std::vector<const FlagSet*> subcommand_flags() const { return {&flags_}; }
  // Applies the values of the flag set that was parsed (FlagSet::Apply).
  virtual Status ApplyFlags() const { return flags_.Apply(); }

 protected:
  // Registers flags_ with `app` and returns it; the last step of Register.
  CLI::App* RegisterFlags(CLI::App* app) {
    flags_.Register(*app);
    return app;
  }

  FlagSet flags_;
};

std::unique_ptr<Command> MakeInspectCommand();
std::unique_ptr<Command> MakeRunCommand();
std::unique_ptr<Command> MakeCompareCommand();
std::unique_ptr<Command> MakeVerifyCommand();
std::unique_ptr<Command> MakeCheckCommand();
std::unique_ptr<Command> MakeReportCommand();
std::unique_ptr<Command> MakeConvertCommand();
std::unique_ptr<Command> MakeCacheCommand();
std::unique_ptr<Command> MakeTransformCommand();
std::unique_ptr<Command> MakeReduceCommand();
std::unique_ptr<Command> MakeRepairCommand();
std::unique_ptr<Command> MakeBenchCommand();
std::unique_ptr<Command> MakeBatchCommand();
std::unique_ptr<Command> MakeHistoryCommand();
std::unique_ptr<Command> MakeFetchCommand();
std::unique_ptr<Command> MakePipelineCommand();
std::unique_ptr<Command> MakeDocsCommand();

// An hf://org/name[@rev]/path model argument replaced by the local path of the file, fetched into
// the hub cache (hub/hub.h FetchHfUri); other paths are left alone. Returns the exit code when it
// failed (after ReportError: 2 for a malformed URI or setting, 3 when it cannot be fetched).
// Where the file came from is appended to `invocation.model_origins` (the reports' provenance).
// `model_type` (--model-type, may be empty) steers the task of an export from PyTorch weights.
std::optional<ExitCode> FetchHfSource(std::string& path, report::Invocation& invocation,
                                      const std::string& model_type = "");
// FetchHfSource's work without reporting: the error, for a command that reports it itself (verify
// writes verify_result.json for every outcome).
std::optional<gate::GateError> ResolveHfSource(std::string& path, report::Invocation& invocation,
                                               const std::string& model_type = "");
// verify's SOURCE naming a whole Hugging Face repository, as OpenVINO's verify-conversion document
// names a model: hf://org/name[@revision], or a bare org/name that is no local path. Replaced by
// a folder of the files a Hugging Face model needs (config.json, weights, tokenizer and processor
// files) fetched at one commit (convert::FetchHubFolder), which verify takes Path A with. Any
// other path is left as it is.
std::optional<gate::GateError> ResolveHfRepoSource(std::string& path,
                                                   report::Invocation& invocation);

// A command line `args` (argv without the program) that was refused before any command ran: when
// it is a verify with --out DIR, writes DIR/verify_result.json saying so (verify_passed false,
// `status` the error), since verify writes one for every outcome. Anything else: nothing.
void WriteVerifyUsageResult(const std::vector<std::string>& args, const Status& status);

// Every command, in the order `convgate --help` lists them.
std::vector<std::unique_ptr<Command>> MakeCommands();

// Seconds since the process started (the figure reports give as the invocation's duration).
double ProcessSeconds();

// The one way an error leaves convgate: prints "convgate: error (<stage>): <message>" to stderr
// (a usage error: "convgate: <message>" and where to find the usage) and returns the exit code for
// that stage (gate::ExitCodeFor).
ExitCode ReportError(gate::Stage stage, const Status& status);

// A workflow's rendering (report::Render), finished uniformly: result files under --out (not for
// a usage error: nothing ran, so there is no verdict to record; verify writes verify_result.json
// even then), the table or JSON on stdout, the
// error line on stderr. Returns the exit code ("cannot run" if a result file could not be
// written).
struct Rendered : report::Rendering {
  // What --json prints when it is not the report itself (transform: its record with the report).
  std::optional<nlohmann::json> printed_json;
};
ExitCode Finish(const OutputOptions& options, const Rendered& rendered);

// Renders a workflow's result in every form (report::Render) and finishes (see Finish).
template <typename Result>
ExitCode RenderAndFinish(const Result& result, report::Invocation& invocation,
                         const OutputOptions& options) {
  invocation.seconds = ProcessSeconds();
  return Finish(options, Rendered{report::Render(result, invocation, UseColor(options))});
}

// With --store: records the finished gate (batch/record_gate.h) after its result files were
// written. A store that cannot be opened or written is exit 3, named; nothing already written is
// touched. Usage errors and interrupts are not recorded (nothing ran to the end).
ExitCode RecordInStore(const GateStoreOptions& store, const report::Invocation& invocation,
                       const OutputOptions& options, const Rendered& rendered, ExitCode exit_code);

// RenderAndFinish, then RecordInStore.
template <typename Result>
ExitCode RenderFinishAndRecord(const Result& result, report::Invocation& invocation,
                               const OutputOptions& options, const GateStoreOptions& store) {
  invocation.seconds = ProcessSeconds();
  const Rendered rendered{report::Render(result, invocation, UseColor(options))};
  return RecordInStore(store, invocation, options, rendered, Finish(options, rendered));
}

}  // namespace convgate::cli
