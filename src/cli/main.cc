// convgate: proves a converted model still computes what its source computed.
// Dispatch only: each subcommand lives in its own cmd_*.cc.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <vector>

#include "command.h"
#include "convgate/version.h"

namespace {

constexpr char kFooter[] =
    "Exit codes: 0 the gate passed; 1 a check failed; 2 usage error; 3 a model or input could "
    "not be loaded or run; 4 internal error. A failed gate still writes every result file.";

int Main(int argc, char** argv) {
  using convgate::cli::Command;
  // ONNX Runtime's official builds enable telemetry in the first Ort::Env: it writes
  // /tmp/mat-debug-<pid>.log and overflows the stack on long command lines (DESIGN.md pitfalls).
  ::setenv("ORT_DISABLE_TELEMETRY", "1", 1);

  CLI::App app{"convgate: proves a converted ML model still computes what its source computed."};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("convgate ") + convgate::kVersion + " (" +
                                        convgate::kBuildCommit + ")");
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(convgate::cli::MakeInspectCommand());
  commands.push_back(convgate::cli::MakeRunCommand());
  commands.push_back(convgate::cli::MakeCompareCommand());
  commands.push_back(convgate::cli::MakeVerifyCommand());
  commands.push_back(convgate::cli::MakeCheckCommand());
  commands.push_back(convgate::cli::MakeConvertCommand());
  commands.push_back(convgate::cli::MakeCacheCommand());
  commands.push_back(convgate::cli::MakeTransformCommand());
  commands.push_back(convgate::cli::MakeReduceCommand());
  std::vector<std::pair<CLI::App*, Command*>> registered;
  for (auto& command : commands) {
    CLI::App* sub = command->Register(app);
    sub->footer(kFooter);
    registered.emplace_back(sub, command.get());
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message
    return 2;
  }
  convgate::report::Invocation invocation;
  invocation.argv.assign(argv, argv + argc);
  invocation.started_at = convgate::report::UtcNow();
  for (auto& [sub, command] : registered) {
    if (sub->parsed()) {
      invocation.command = sub->get_name();
      return command->Execute(invocation);
    }
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing should throw across modules; this is the last line of defence, and says so.
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "convgate: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "convgate: internal error: unknown exception\n";
  }
  return 4;
}
