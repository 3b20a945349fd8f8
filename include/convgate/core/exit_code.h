// The process exit codes convgate documents (README "Exit codes", every command's --help).
#pragma once

namespace convgate {

enum class ExitCode : int {
  kPassed = 0,     // the gate passed, or the command did what it was asked
  kFailed = 1,     // a check failed (a tolerance miss, NaN, a structure mismatch)
  kUsage = 2,      // a bad flag or argument, found before anything ran
  kCannotRun = 3,  // a model, input or file could not be loaded, converted, run or written
  kInternal = 4,   // a bug in convgate
  // Stopped by a signal (128 + its number, the shell's convention), after killing the children
  // and removing the temp folders (interrupt.h).
  kInterrupted = 130,  // SIGINT (Ctrl-C)
  kTerminated = 143,   // SIGTERM
};

constexpr int ToInt(ExitCode code) { return static_cast<int>(code); }

}  // namespace convgate
