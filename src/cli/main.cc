// convgate: proves a converted model still computes what its source computed.
// Dispatch only: the command line is in command_line.cc, each subcommand in its own cmd_*.cc.
#include <execinfo.h>

#include <exception>
#include <iostream>
#include <new>
#include <system_error>

#include "cli/command_line.h"

int main(int argc, char** argv) {
  using convgate::ExitCode;
  using convgate::ToInt;
  // Nothing should throw across modules; this is the last line of defence, and says so. Running
  // out of memory, or of room for a thread's stack, is not a bug: it is exit 3 (could not run),
  // in words that say which, since a limit (ulimit -v/-d, batch --job-memory) is the usual cause.
  //
  // glibc loads libgcc_s.so.1 on first need for unwinding a thread that exits or is cancelled;
  // under a tight address-space limit (batch --job-memory) that late dlopen can fail, and glibc
  // then aborts ("libgcc_s.so.1 must be installed for unwinding to work") instead of convgate
  // saying it ran out of memory. backtrace() makes glibc load it now, while there is room.
  void* frame[1];
  (void)backtrace(frame, 1);
  try {
    return convgate::cli::RunMain(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "convgate: out of memory (an allocation failed; a limit on address space or "
                 "data, such as ulimit -v or batch --job-memory, may be too low)\n";
    return ToInt(ExitCode::kCannotRun);
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::resource_unavailable_try_again) {
      std::cerr << "convgate: out of memory: cannot start a thread (" << e.what()
                << "; a limit on address space or threads may be too low)\n";
      return ToInt(ExitCode::kCannotRun);
    }
    std::cerr << "convgate: internal error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "convgate: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "convgate: internal error: unknown exception\n";
  }
  return ToInt(ExitCode::kInternal);
}
