#include "cli/command_line.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "cli/progress_line.h"
#include "convgate/core/interrupt.h"
#include "convgate/core/progress.h"
#include "convgate/core/redact.h"
#include "convgate/core/temp_dir.h"
#include "convgate/version.h"

namespace convgate::cli {
namespace {

constexpr char kGateExitCodes[] =
    "Exit codes: 0 the gate passed; 1 a check failed; 2 usage error; 3 a model or input could "
    "not be loaded or run; 4 internal error; 130/143 interrupted by SIGINT/SIGTERM. A failed "
    "gate still writes every result file.";

// Strips CLI11's own advice line: convgate says where the usage is itself.
std::string CliMessage(const CLI::ParseError& error) {
  std::string message = error.what();
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return message;
}

// Levenshtein distance between two flag names (a few dozen bytes: the table is tiny).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown flag --dims; did you mean --dim?" for the first "--name" in `args` that `sub` does not
// declare, instead of CLI11's "The following arguments were not expected: x=1 --dims" (reversed,
// and silent about what was meant). "" when every flag is known: CLI11's message stands.
std::string UnknownFlagMessage(const CLI::App& app, const CLI::App* sub,
                               const std::vector<std::string>& args) {
  std::vector<std::string> known;
  for (const CLI::App* scope : {&app, sub}) {
    if (scope == nullptr) continue;
    for (const CLI::Option* option : scope->get_options()) {
      for (const std::string& name : option->get_lnames()) known.push_back("--" + name);
    }
  }
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0 || arg.size() < 3) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string best;
    size_t best_distance = 3;  // at most two edits: a typo, not another flag
    for (const std::string& candidate : known) {
      const size_t distance = EditDistance(name, candidate);
      if (distance < best_distance) {
        best_distance = distance;
        best = candidate;
      }
    }
    const std::string command = sub != nullptr ? "convgate " + sub->get_name() : "convgate";
    return "unknown flag " + name +
           (best.empty() ? "; `" + command + " --help` lists the flags"
                         : "; did you mean " + best + "?");
  }
  return "";
}

// What the command's own exit code becomes when a signal stopped it: the shell's 128 + signal,
// whatever step the interrupt cut short.
int ExitCodeAfter(ExitCode finished) {
  const int signal = InterruptSignal();
  if (signal == 0) return ToInt(finished);
  std::cerr << "convgate: interrupted by " << SignalName(signal)
            << ": stopped its children and removed its temporary folders\n";
  return ToInt(signal == SIGTERM ? ExitCode::kTerminated : ExitCode::kInterrupted);
}

}  // namespace

CommandLine::CommandLine()
    : app_("convgate: proves a converted ML model still computes what its source computed.") {
  app_.name("convgate");  // "Usage: convgate verify [OPTIONS] ...", not "Usage: [OPTIONS] ..."
  app_.footer(WrapText(kGateExitCodes, 100));
  app_.require_subcommand(1);
  app_.set_version_flag("--version",
                        std::string("convgate ") + kVersion + " (" + kBuildCommit + ")");
  commands_ = MakeCommands();
  for (auto& command : commands_) {
    CLI::App* sub = command->Register(app_);
    sub->footer(WrapText(sub->get_footer().empty() ? kGateExitCodes : sub->get_footer(), 100));
    sub->description(WrapText(sub->get_description(), 100));
    registered_.emplace_back(sub, command.get());
  }
}

Result<Command*> CommandLine::Parse(const std::vector<std::string>& args) {
  std::vector<ListFlag> list_flags;
  for (const auto& [sub, command] : registered_) {
    for (const FlagSet* flags : command->subcommand_flags()) {
      for (ListFlag& list_flag : flags->ListFlags()) list_flags.push_back(list_flag);
    }
  }
  // CLI11 takes the arguments in reverse order.
  std::vector<std::string> reversed = ExpandListFlags(args, list_flags);
  std::reverse(reversed.begin(), reversed.end());
  try {
    app_.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    throw;
  } catch (const CLI::CallForAllHelp&) {
    throw;
  } catch (const CLI::CallForVersion&) {
    throw;
  } catch (const CLI::ParseError& error) {
    // The subcommand is the first word that is not a flag.
    const CLI::App* chosen = nullptr;
    const auto word = std::find_if(args.begin(), args.end(),
                                   [](const std::string& arg) { return arg.rfind('-', 0) != 0; });
    for (const auto& [sub, command] : registered_) {
      if (word != args.end() && *word == sub->get_name()) chosen = sub;
    }
    const std::string unknown = UnknownFlagMessage(app_, chosen, args);
    return Status::InvalidArgument(unknown.empty() ? CliMessage(error) : unknown);
  }
  for (const auto& [sub, command] : registered_) {
    if (!sub->parsed()) continue;
    CONVGATE_RETURN_IF_ERROR(command->ApplyFlags());
    return command;
  }
  return Status::InvalidArgument("no command given");
}

namespace {

// Parses and executes `args` (argv without the program); `program` is argv[0] as the reports
// show it. `progress`: draw the progress line (RunMain) or not (RunInProcess).
int ParseAndExecute(const std::vector<std::string>& args, const std::string& program,
                    bool progress_line) {
  CommandLine command_line;
  Result<Command*> command = Status::Internal("the command line was not parsed");
  try {
    command = command_line.Parse(args);
  } catch (const CLI::ParseError& request) {  // --help and --version: printed, exit 0
    return command_line.app().exit(request, std::cout, std::cerr);
  }
  if (!command.ok()) {
    WriteVerifyUsageResult(args, command.status());
    return ToInt(ReportError(gate::Stage::kFlags, command.status()));
  }
  report::Invocation invocation;
  // Redacted once, here: report.json, --json, a store's runs row and a batch's all show this.
  invocation.argv = args;
  invocation.argv.insert(invocation.argv.begin(), program);
  invocation.argv = RedactCommandLine(invocation.argv);
  invocation.started_at = report::UtcNow();
  for (const auto& [sub, registered] : command_line.commands()) {
    if (registered == *command) invocation.command = sub->get_name();
  }
  // batch draws its own progress (jobs, not tasks); every other command shows its long work.
  std::optional<ProgressLine> progress;
  if (progress_line && invocation.command != "batch") {
    progress.emplace(ProgressLine::ModeFor(QuietProgress()));
    SetProgressSink(&*progress);
  }
  const ExitCode exit_code = (*command)->Execute(invocation);
  SetProgressSink(nullptr);
  progress.reset();
  return ToInt(exit_code);
}

// Points a standard stream at a string for its lifetime.
class StreamCapture {
 public:
  explicit StreamCapture(std::ostream& stream) : stream_(stream), saved_(stream.rdbuf()) {
    stream_.rdbuf(buffer_.rdbuf());
  }
  ~StreamCapture() { stream_.rdbuf(saved_); }
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;
  std::string text() const { return buffer_.str(); }

 private:
  std::ostream& stream_;
  std::streambuf* saved_;
  std::ostringstream buffer_;
};

}  // namespace

int RunMain(int argc, char** argv) {
  // ONNX Runtime's builds enable telemetry in its first Env: it writes /tmp/mat-debug-<pid>.log
  // and overflows the stack on long command lines (docs/architecture.md, Pitfalls).
  ::setenv("ORT_DISABLE_TELEMETRY", "1", 1);
  InstallInterruptHandling();
  // What an earlier convgate killed outright (SIGKILL, a crash) left in $TMPDIR.
  SweepStaleTempDirs();
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int exit_code = ParseAndExecute(args, argv[0], /*progress_line=*/true);
  return ExitCodeAfter(static_cast<ExitCode>(exit_code));
}

CapturedRun RunInProcess(const std::vector<std::string>& args) {
  ::setenv("ORT_DISABLE_TELEMETRY", "1", 0);
  CapturedRun run;
  StreamCapture out(std::cout);
  StreamCapture err(std::cerr);
  try {
    run.exit_code = ParseAndExecute(args, "convgate", /*progress_line=*/false);
  } catch (const std::exception& e) {  // bad_alloc: the host process goes on
    std::cerr << "convgate: error (internal): " << e.what() << "\n";
    run.exit_code = ToInt(ExitCode::kInternal);
  }
  std::cout.flush();
  run.out = out.text();
  run.err = err.text();
  return run;
}

}  // namespace convgate::cli
