// Interruption by SIGINT (Ctrl-C) or SIGTERM, and the cleanup it owes: the process groups of the
// children convgate runs (converters, exec runners) and the temporary folders it owns.
//
// InstallInterruptHandling() (the CLI's main, once) installs a handler that only records the
// signal and writes to a pipe, and starts one watcher thread that does the rest outside the
// handler. On the first signal the watcher sends SIGTERM to every registered child process group
// and InterruptFd() becomes readable for good: every wait for a child polls it, kills its child's
// group, and returns "interrupted", so the main flow fails its current step, unwinds (each temp
// folder is removed by its owner) and the CLI exits 128 + the signal (130, 143). If the main flow
// has not ended kInterruptGraceSeconds after the signal (it may be deep inside an inference that
// cannot be stopped), or at a second signal, the watcher sends SIGKILL to the registered groups,
// removes the registered temp folders and ends the process itself with the same exit code.
//
// Without InstallInterruptHandling (library use, unit tests) no signal disposition changes,
// Interrupted() stays false and the registries are bookkeeping only.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// How long the main flow gets to unwind after the first signal before the watcher ends the
// process: a converter's SIGTERM grace (SubprocessOptions::kill_grace_seconds, 2 s) plus time to
// delete temp folders and write the result files, with room to spare.
inline constexpr double kInterruptGraceSeconds = 5.0;

// Installs the SIGINT and SIGTERM handler and starts the watcher. Idempotent. Children started
// afterwards get default dispositions back (subprocess.h resets them).
void InstallInterruptHandling();

// The first SIGINT or SIGTERM received, or 0.
int InterruptSignal();
bool Interrupted();

// "SIGINT", "SIGTERM", or "signal N".
std::string SignalName(int signal);

// Unavailable: "interrupted by SIGINT" with `context` in front when it is not empty.
// REQUIRES: Interrupted().
Status InterruptedStatus(std::string_view context = "");

// A descriptor that becomes readable, and stays readable, once a signal has arrived; poll it
// beside whatever a wait waits for. -1 before InstallInterruptHandling (poll ignores it).
int InterruptFd();

// Sleeps `seconds`, or less when a signal arrives. Returns false when interrupted.
bool SleepUnlessInterrupted(double seconds);

// Registers a child's process group, which an interrupt sends SIGTERM (and, at the deadline,
// SIGKILL). The destructor unregisters it; do that before reaping the child, while its pid (the
// group id) cannot be reused.
class ScopedChildGroup {
 public:
  explicit ScopedChildGroup(pid_t group);
  ~ScopedChildGroup();
  ScopedChildGroup(const ScopedChildGroup&) = delete;
  ScopedChildGroup& operator=(const ScopedChildGroup&) = delete;

 private:
  pid_t group_;
};

// Registers a temporary folder that the watcher removes if it has to end the process itself.
// Owners remove their folders on the normal path (temp_dir.h); this is the last resort.
void RegisterTempPath(const std::filesystem::path& path);
void UnregisterTempPath(const std::filesystem::path& path);

}  // namespace convgate
