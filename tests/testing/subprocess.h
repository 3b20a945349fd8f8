// Runs a program the way a user would (argv, no shell) and captures exit code, stdout and stderr.
// For CLI end-to-end tests, which must exercise the real binary (docs/architecture.md rule 6).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace convgate::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal (then `signal` is set)
  int signal = 0;
  std::string out;
  std::string err;
};

// REQUIRES: argv[0] is a path to an executable.
ProcessResult RunProcess(const std::vector<std::string>& argv);

// A process started without waiting for it, for tests that signal it while it runs. Its stdout
// and stderr go to temporary files read by WaitProcess.
struct StartedProcess {
  pid_t pid = -1;  // -1 when it could not be started
  std::string out_path;
  std::string err_path;
};

// REQUIRES: argv[0] is a path to an executable.
StartedProcess StartProcess(const std::vector<std::string>& argv);
// Waits for it to end (reaps it) and collects what it printed.
ProcessResult WaitProcess(const StartedProcess& process);

// True while `pid` runs: it exists and is not a zombie (a dead process nobody has reaped yet; a
// container's init may never reap the orphans of a killed process).
bool ProcessIsRunning(pid_t pid);

// Checks `condition` every 20 ms for up to `seconds`; true as soon as it holds.
bool WaitFor(const std::function<bool()>& condition, double seconds);

// The pid a test helper wrote to `path` (tests/fixtures/hang.py), or -1 while there is none.
pid_t ReadPidFile(const std::string& path);

}  // namespace convgate::testing
