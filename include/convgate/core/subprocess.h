// Running an external program (or a forked copy of this one) with a timeout, the way convgate runs
// converters and exec backends: argv, never a shell string; stdin is /dev/null; stdout and stderr
// are captured (their last bytes kept); the child leads its own process group so a timeout kills
// everything it started, not only the direct child.
//
// A child never outlives convgate: it gets SIGKILL when the thread that started it dies
// (PR_SET_PDEATHSIG, so even a convgate killed by SIGKILL takes it along), and an interrupt
// (interrupt.h) stops the wait, killing the child's group: SIGTERM, then SIGKILL after the grace.
// Once convgate is interrupted, nothing new starts (Unavailable, "interrupted by SIGINT").
//
// Thread safety: each call is independent. RunInForkedChild forks, which copies only the calling
// thread: call it before starting threads that hold locks the child needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate {

struct SubprocessOptions {
  // Wall-clock limit in seconds; <= 0 means none. When it passes, the process group gets SIGTERM,
  // then SIGKILL after kill_grace_seconds (the grace lets a converter remove its temp files).
  double timeout_seconds = 0.0;
  double kill_grace_seconds = 2.0;
  // Per stream, only the last this-many bytes are kept: error messages are at the end, and a
  // chatty converter must not grow convgate's memory without bound.
  size_t max_captured_bytes = 64 * 1024;
  // "NAME=value" entries added to the inherited environment (overriding a variable of that name).
  std::vector<std::string> extra_env;
  // > 0: the child's RLIMIT_AS (virtual address space, bytes), set between fork and exec so it
  // binds the program and everything it starts (batch --job-memory). Address space, not resident
  // memory: a runtime that reserves large virtual ranges (thread stacks, allocator arenas) needs a
  // limit well above what it touches.
  int64_t address_space_bytes = 0;
  // > 0: the child is hung when the CPU time of its process group (utime + stime of every member,
  // with what they reaped: /proc/<pid>/stat) has not grown for this many seconds. It is stopped
  // as a timeout is (SIGTERM, SIGKILL after the grace) and the result says `hung`. A deadlocked
  // converter (a futex wait) is found in this time rather than at the timeout; a process that
  // waits on purpose (sleep, a download that stalls completely) looks the same.
  double stall_seconds = 0.0;
  // Non-empty: the child's argv[0], what ps and /proc/PID/cmdline show, while argv[0] still names
  // the file run (batch runs /proc/self/exe, shown as the binary's real path).
  std::string shown_argv0;
};

struct SubprocessResult {
  int exit_code = -1;  // -1 unless the process exited normally
  int signal = 0;      // the signal that ended it; 0 when it exited
  bool timed_out = false;
  bool hung = false;           // stopped for making no CPU progress (SubprocessOptions)
  double stall_seconds = 0.0;  // the stall time that made it `hung`
  int interrupted_by = 0;      // SIGINT or SIGTERM when convgate's interrupt stopped it, else 0
  double seconds = 0.0;
  std::string stdout_tail;
  std::string stderr_tail;
  bool stdout_truncated = false;
  bool stderr_truncated = false;

  bool succeeded() const {
    return !timed_out && !hung && interrupted_by == 0 && signal == 0 && exit_code == 0;
  }
  // "exited with code 1", "was killed by signal 9 (Killed)", "timed out after 2.5 s",
  // "hung: no CPU progress for 120 s",
  // "was stopped: convgate was interrupted by SIGINT".
  std::string Describe() const;
};

// Runs argv[0] (searched in PATH when it has no '/') with argv. REQUIRES: !argv.empty().
// NotFound when the program does not exist, FailedPrecondition when it is not executable,
// Unavailable for other spawn failures (each naming the program). A program that runs and fails
// is not an error here: the result says how it ended.
//
// When the direct child has exited, whatever it left running in its process group is killed, so
// a converter's stray helpers cannot outlive it.
Result<SubprocessResult> RunSubprocess(const std::vector<std::string>& argv,
                                       const SubprocessOptions& options);

// Forks; the child runs `body` and exits with its return value (70, EX_SOFTWARE, if it throws)
// without running atexit handlers or static destructors. Same capture, timeout, parent-death and
// interrupt rules as RunSubprocess; the child starts with default signal dispositions. Isolates
// in-process work that might hang or crash (a crash is a signal in the result, not a crash of the
// caller).
Result<SubprocessResult> RunInForkedChild(const std::function<int()>& body,
                                          const SubprocessOptions& options);

// The last `max_lines` lines of `text` (all of it when shorter), without a trailing newline.
std::string TailLines(std::string_view text, size_t max_lines);

}  // namespace convgate
