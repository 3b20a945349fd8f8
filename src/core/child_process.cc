#include "convgate/core/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "convgate/core/interrupt.h"
#include "core/spawn.h"

namespace convgate {
namespace {

using Clock = std::chrono::steady_clock;

// Without a pidfd, how often a wait for the child's exit looks again (milliseconds), as in
// subprocess.cc.
constexpr int kPollFallbackMs = 20;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Milliseconds until `deadline` (seconds since start; <= 0: none), for poll; -1 when none.
int MillisUntil(double deadline, Clock::time_point start) {
  if (deadline <= 0) return -1;
  const double left = deadline - SecondsSince(start);
  return left <= 0 ? 0 : static_cast<int>(std::ceil(left * 1000.0));
}

bool HasEnded(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno != EINTR;
  }
  return info.si_pid == pid;
}

}  // namespace

struct ChildProcess::State {
  SubprocessOptions options;
  Clock::time_point start;
  int in = -1;   // our end of the child's stdin (a socket: send() can refuse SIGPIPE)
  int out = -1;  // the child's stdout, non-blocking
  int err = -1;  // the child's stderr, non-blocking
  int pidfd = -1;
  std::string out_buffer;  // bytes of stdout not yet returned as a line
  std::string err_tail;
  bool err_truncated = false;
  std::unique_ptr<ScopedChildGroup> group;

  ~State() {
    CloseFd(in);
    CloseFd(out);
    CloseFd(err);
    CloseFd(pidfd);
  }
  void AppendErr(const char* bytes, size_t n) {
    err_tail.append(bytes, n);
    // Trimmed in batches, at twice the limit, as subprocess.cc's Tail.
    if (err_tail.size() > 2 * options.max_captured_bytes) {
      err_tail.erase(0, err_tail.size() - options.max_captured_bytes);
      err_truncated = true;
    }
  }
};

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(const std::vector<std::string>& argv,
                                                          const SubprocessOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("cannot run an empty command");
  if (Interrupted()) return InterruptedStatus("not starting '" + argv[0] + "'");
  auto state = std::make_unique<State>();
  state->options = options;
  int in_pair[2], out_pipe[2], err_pipe[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0) {
    return Status::Unavailable(std::string("cannot create a socket pair: ") + std::strerror(errno));
  }
  state->in = in_pair[0];
  int child_in = in_pair[1];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(child_in);
    return Status::Unavailable(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  state->out = out_pipe[0];
  state->err = err_pipe[0];
  ::fcntl(state->out, F_SETFL, O_NONBLOCK);
  ::fcntl(state->err, F_SETFL, O_NONBLOCK);
  state->start = Clock::now();
  Result<pid_t> pid =
      internal::SpawnArgv(argv, options, {child_in, out_pipe[1], err_pipe[1], false});
  ::close(child_in);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (!pid.ok()) return pid.status();
  state->pidfd = static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0));
  state->group = std::make_unique<ScopedChildGroup>(*pid);
  std::unique_ptr<ChildProcess> child(new ChildProcess(std::move(state)));
  child->pid_ = *pid;
  child->running_ = true;
  return child;
}

ChildProcess::ChildProcess(std::unique_ptr<State> state) : state_(std::move(state)) {}

ChildProcess::~ChildProcess() {
  if (running_) Finish(/*kill_now=*/false, /*timed_out=*/false);
}

std::string ChildProcess::stderr_tail() const {
  const size_t limit = state_->options.max_captured_bytes;
  const std::string& tail = state_->err_tail;
  return tail.size() > limit ? tail.substr(tail.size() - limit) : tail;
}

bool ChildProcess::DrainReady() {
  char buffer[1 << 14];
  while (state_->err >= 0) {
    const ssize_t n = ::read(state_->err, buffer, sizeof(buffer));
    if (n > 0) {
      state_->AppendErr(buffer, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
      CloseFd(state_->err);
    } else if (errno != EINTR) {
      break;
    }
  }
  while (state_->out >= 0) {
    const ssize_t n = ::read(state_->out, buffer, sizeof(buffer));
    if (n > 0) {
      state_->out_buffer.append(buffer, static_cast<size_t>(n));
      if (state_->out_buffer.size() > kMaxLineBytes) break;
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
      CloseFd(state_->out);
    } else if (errno != EINTR) {
      break;
    }
  }
  return state_->out >= 0;
}

void ChildProcess::Finish(bool kill_now, bool timed_out) {
  CloseFd(state_->in);  // end of file on its stdin: a well-behaved child exits
  if (kill_now) ::kill(-pid_, SIGKILL);
  const double grace_end = SecondsSince(state_->start) + state_->options.kill_grace_seconds;
  while (!HasEnded(pid_)) {
    if (SecondsSince(state_->start) >= grace_end) {
      ::kill(-pid_, SIGKILL);
      break;
    }
    pollfd fds[3] = {
        {state_->out, POLLIN, 0}, {state_->err, POLLIN, 0}, {state_->pidfd, POLLIN, 0}};
    const int wait_ms = std::min(MillisUntil(grace_end, state_->start),
                                 state_->pidfd >= 0 ? 1000 : kPollFallbackMs);
    ::poll(fds, 3, wait_ms);
    DrainReady();
  }
  // Ended (or killed) but not reaped: its group id is still reserved, so what it left running in
  // the group is killed before the reap.
  ::kill(-pid_, SIGKILL);
  int wait_status = 0;
  while (::waitpid(pid_, &wait_status, 0) < 0 && errno == EINTR) {
  }
  state_->group.reset();
  DrainReady();
  running_ = false;
  ended_ = SubprocessResult();
  if (WIFEXITED(wait_status)) ended_.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) ended_.signal = WTERMSIG(wait_status);
  ended_.timed_out = timed_out;
  // A child that failed while convgate was being interrupted failed because of it.
  const bool failed = ended_.signal != 0 || ended_.exit_code != 0;
  if (failed && Interrupted()) {
    ended_.interrupted_by = InterruptSignal();
    ended_.timed_out = false;
  }
  ended_.seconds = SecondsSince(state_->start);
  ended_.stderr_tail = stderr_tail();
  ended_.stderr_truncated = state_->err_truncated;
  CloseFd(state_->out);
  CloseFd(state_->err);
}

Status ChildProcess::WriteLine(std::string_view line, double timeout_seconds) {
  if (!running_) return Status::Unavailable("the process has ended");
  std::string bytes(line);
  bytes += '\n';
  const double deadline = timeout_seconds > 0 ? SecondsSince(state_->start) + timeout_seconds : 0.0;
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n =
        ::send(state_->in, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      Finish(/*kill_now=*/false, /*timed_out=*/false);
      return Status::Unavailable("the process stopped reading its input");
    }
    if (deadline > 0 && SecondsSince(state_->start) >= deadline) {
      Finish(/*kill_now=*/true, /*timed_out=*/true);
      return Status::Unavailable("the process did not read its input in time");
    }
    // Full: drain stderr so a child blocked writing it can go on reading.
    pollfd fds[3] = {
        {state_->in, POLLOUT, 0}, {state_->err, POLLIN, 0}, {InterruptFd(), POLLIN, 0}};
    ::poll(fds, 3, std::min(MillisUntil(deadline, state_->start), 1000));
    DrainReady();
    if (Interrupted()) {
      Finish(/*kill_now=*/true, /*timed_out=*/false);
      return InterruptedStatus();
    }
  }
  return Status::OK();
}

Result<std::string> ChildProcess::ReadLine(double timeout_seconds) {
  if (!running_) return Status::Unavailable("the process has ended");
  const double deadline = timeout_seconds > 0 ? SecondsSince(state_->start) + timeout_seconds : 0.0;
  while (true) {
    const size_t newline = state_->out_buffer.find('\n');
    if (newline != std::string::npos) {
      std::string line = state_->out_buffer.substr(0, newline);
      state_->out_buffer.erase(0, newline + 1);
      return line;
    }
    if (state_->out_buffer.size() > kMaxLineBytes) {
      Finish(/*kill_now=*/true, /*timed_out=*/false);
      return Status::DataLoss("the process wrote a line longer than " +
                              std::to_string(kMaxLineBytes) + " bytes");
    }
    if (state_->out < 0) {
      Finish(/*kill_now=*/false, /*timed_out=*/false);
      return Status::Unavailable("the process ended");
    }
    if (Interrupted()) {
      Finish(/*kill_now=*/true, /*timed_out=*/false);
      return InterruptedStatus();
    }
    if (deadline > 0 && SecondsSince(state_->start) >= deadline) {
      Finish(/*kill_now=*/true, /*timed_out=*/true);
      return Status::Unavailable("the process did not answer in time");
    }
    pollfd fds[3] = {
        {state_->out, POLLIN, 0}, {state_->err, POLLIN, 0}, {InterruptFd(), POLLIN, 0}};
    ::poll(fds, 3, MillisUntil(deadline, state_->start));
    DrainReady();
  }
}

}  // namespace convgate
