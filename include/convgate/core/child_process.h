// A long-lived child process spoken to one line at a time: a runtime's runner that loads a model
// once and then serves every sample (the "openvino" backend's runner). The parent writes requests
// to the child's stdin and reads responses from its stdout, one line each; while it waits, the
// child's stderr is drained and its last bytes kept for messages.
//
// Started like RunSubprocess's children (subprocess.h: argv, never a shell string; its own process
// group; default signal dispositions; options.extra_env), except for the parent-death signal: the
// process outlives the call that started it, and that call may run on a short-lived thread (a
// comparison loads its two models on two threads), whose end would kill it. Instead the child must
// exit when its stdin reaches end of file (convgate ended, however it ended) and should also watch
// its parent (the OpenVINO runner polls os.getppid() during long inferences).
//
// It ends when the ChildProcess is destroyed (stdin closed, then SIGKILL to its group after
// options.kill_grace_seconds), when a wait times out or convgate is interrupted (SIGKILL to its
// group at once), or by itself; ended() then says how.
//
// Thread safety: none; callers serialize calls on one ChildProcess.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/subprocess.h"

namespace convgate {

class ChildProcess {
 public:
  // NotFound, FailedPrecondition or Unavailable naming the program when it cannot be started (as
  // RunSubprocess). options.timeout_seconds is not used: each wait has its own.
  // REQUIRES: !argv.empty().
  static Result<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                     const SubprocessOptions& options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Writes `line` and a newline to the child's stdin. Unavailable when the child no longer reads
  // it (it ended: ended() says how) or it does not take the bytes within `timeout_seconds`
  // (<= 0: no limit; the child is then killed).
  Status WriteLine(std::string_view line, double timeout_seconds);

  // The next line the child writes to its stdout, without the newline. Waits at most
  // `timeout_seconds` (<= 0: no limit). Unavailable when the child ends before writing a whole
  // line, when the time passes or when convgate is interrupted (the child is killed in both
  // cases); ended() then says how it ended. A line longer than max_line_bytes is DataLoss (the
  // child is killed: the rest of the stream cannot be trusted).
  Result<std::string> ReadLine(double timeout_seconds);

  bool running() const { return running_; }
  // How the child ended: exit_code or signal, timed_out, interrupted_by, seconds since Start and
  // stderr_tail. REQUIRES: !running().
  const SubprocessResult& ended() const { return ended_; }
  // What the child has written to stderr so far (its last options.max_captured_bytes).
  std::string stderr_tail() const;
  pid_t pid() const { return pid_; }

  // The longest line ReadLine accepts: a runner's responses are short (a signature, a status);
  // tensors travel in files.
  static constexpr size_t kMaxLineBytes = 16 * 1024 * 1024;

 private:
  struct State;
  explicit ChildProcess(std::unique_ptr<State> state);
  // Kills the group (when `kill_now`, or after the grace), drains stderr and reaps the child.
  void Finish(bool kill_now, bool timed_out);
  // Reads whatever is ready on stdout and stderr without waiting; false once stdout is closed.
  bool DrainReady();

  std::unique_ptr<State> state_;
  pid_t pid_ = -1;
  bool running_ = false;
  SubprocessResult ended_;
};

}  // namespace convgate
