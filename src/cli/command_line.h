// The whole command line: every command registered on one CLI11 app, parsed, its flags applied.
// main() runs it; tests build one to parse argument lists without running anything.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"

namespace convgate::cli {

class CommandLine {
 public:
  CommandLine();

  // Parses `args` (without the program name) and applies the chosen command's flags. On success
  // returns the command to Execute. CLI11's help and version requests come back as
  // CLI::CallForHelp / CLI::CallForVersion exceptions for the caller to print; every other
  // problem is an InvalidArgument with CLI11's or the flag's message.
  Result<Command*> Parse(const std::vector<std::string>& args);

  CLI::App& app() { return app_; }
  // The subcommands and the Command behind each, in registration order.
  const std::vector<std::pair<CLI::App*, Command*>>& commands() const { return registered_; }

 private:
  CLI::App app_;
  std::vector<std::unique_ptr<Command>> commands_;
  std::vector<std::pair<CLI::App*, Command*>> registered_;
};

// main(): parse, execute, map every outcome to a documented exit code.
int RunMain(int argc, char** argv);

// A command line run inside a host process (the Python package): as RunMain, but the host keeps
// its signals (no interrupt handlers are installed), no progress line is drawn, and what the
// command prints to std::cout and std::cerr is captured rather than printed. Children (runners)
// still write to the process's own stderr. One call at a time per process.
struct CapturedRun {
  int exit_code = 4;
  std::string out;
  std::string err;
};
CapturedRun RunInProcess(const std::vector<std::string>& args);

}  // namespace convgate::cli
