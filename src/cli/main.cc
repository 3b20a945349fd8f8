// convgate: proves a converted model still computes what its source computed.
// Dispatch only: the command line is in command_line.cc, each subcommand in its own cmd_*.cc.
#include <exception>
#include <iostream>

#include "cli/command_line.h"

int main(int argc, char** argv) {
  // Nothing should throw across modules; this is the last line of defence, and says so.
  try {
    return convgate::cli::RunMain(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "convgate: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "convgate: internal error: unknown exception\n";
  }
  return convgate::ToInt(convgate::ExitCode::kInternal);
}
