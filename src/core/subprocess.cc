#include "convgate/core/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>

#include "convgate/core/interrupt.h"
#include "convgate/core/numbers.h"
#include "convgate/core/scoped_fd.h"
#include "convgate/core/units.h"
#include "core/spawn.h"

extern char** environ;

namespace convgate {
namespace {

using Clock = std::chrono::steady_clock;

// Exit code of a forked body that threw (sysexits.h EX_SOFTWARE: internal software error).
constexpr int kExitSoftware = 70;
// Exit code of a child whose parent died before the child could ask to die with it (sysexits.h
// EX_OSERR); nobody is left to read it.
constexpr int kExitParentGone = 71;
// Exit code of a child whose execve failed (the shell's "command not found"); the parent reports
// the errno it sent instead.
constexpr int kExitExecFailed = 127;

// Without a pidfd, how often the wait loop looks for the child's exit (milliseconds).
constexpr int kPollFallbackMs = 20;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Pipe {
  ScopedFd read;
  ScopedFd write;
};

Status MakePipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  pipe.read.Reset(fds[0]);
  pipe.write.Reset(fds[1]);
  ::fcntl(pipe.read.get(), F_SETFL, O_NONBLOCK);
  return Status::OK();
}

// Keeps the last `limit` bytes of a stream.
struct Tail {
  std::string data;
  bool truncated = false;
  void Append(const char* bytes, size_t n, size_t limit) {
    data.append(bytes, n);
    // Trim in batches (at twice the limit) so a chatty stream costs amortised O(1) per byte.
    if (data.size() > 2 * limit) {
      data.erase(0, data.size() - limit);
      truncated = true;
    }
  }
  void Finish(size_t limit) {
    if (data.size() > limit) {
      data.erase(0, data.size() - limit);
      truncated = true;
    }
  }
};

// Reads what is available now; returns false at end of stream.
bool Drain(int fd, Tail& tail, size_t limit) {
  char buffer[1 << 14];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      tail.Append(buffer, static_cast<size_t>(n), limit);
      continue;
    }
    if (n == 0) return false;
    return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

std::vector<std::string> MergedEnvironment(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> by_name;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text(*entry);
    by_name[text.substr(0, text.find('='))] = text;
  }
  for (const std::string& text : extra) by_name[text.substr(0, text.find('='))] = text;
  std::vector<std::string> merged;
  for (auto& [name, text] : by_name) merged.push_back(std::move(text));
  return merged;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

Status SpawnError(const std::string& program, int err) {
  const std::string prefix = "cannot run '" + program + "': ";
  if (err == ENOENT) {
    return Status::NotFound(prefix + (program.find('/') == std::string::npos
                                          ? "no such program in PATH"
                                          : "no such file"));
  }
  if (err == EACCES || err == ENOEXEC) {
    return Status::FailedPrecondition(prefix + "not executable (" + std::strerror(err) + ")");
  }
  return Status::Unavailable(prefix + std::strerror(err));
}

bool IsExecutableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// The file execve runs for `program`, found the way execvp finds it: itself when it contains a
// '/', else the first executable regular file of that name in PATH (an empty entry is the current
// folder; no PATH means confstr's default). Searched before forking, since the child may not
// allocate. Sets `err` (ENOENT, or EACCES when only non-executable files were found) on failure.
std::string FindExecutable(const std::string& program, int& err) {
  err = 0;
  if (program.find('/') != std::string::npos) return program;
  const char* path_env = std::getenv("PATH");
  std::string dirs = path_env != nullptr ? path_env : "";
  if (path_env == nullptr) {
    char fallback[256] = {};
    ::confstr(_CS_PATH, fallback, sizeof(fallback));
    dirs = fallback;
  }
  bool found_unexecutable = false;
  size_t begin = 0;
  while (true) {
    const size_t colon = dirs.find(':', begin);
    const std::string dir = dirs.substr(begin, colon - begin);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (IsExecutableFile(candidate)) return candidate;
    if (::access(candidate.c_str(), F_OK) == 0) found_unexecutable = true;
    if (colon == std::string::npos) break;
    begin = colon + 1;
  }
  err = found_unexecutable ? EACCES : ENOENT;
  return "";
}

// In a child between fork and exec (or its body): async-signal-safe calls only, because another
// thread of the parent may have held a lock (malloc's) at the fork. `in_fd` < 0 means /dev/null.
void SetUpChild(pid_t parent, int in_fd, int out_fd, int err_fd, bool die_with_thread) {
  if (die_with_thread) {
    // The child dies with the parent thread that forked it, so a convgate killed by SIGKILL
    // (which cleans up nothing) does not leave a converter or runner behind.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent may have died before prctl took effect; then no signal would ever come.
    if (::getppid() != parent) ::_exit(kExitParentGone);
  }
  // Its own process group, so a timeout or an interrupt can kill everything it starts.
  ::setpgid(0, 0);
  // Default dispositions and no blocked signal: convgate's interrupt handler and anything the
  // parent ignores (a shell's background job ignores SIGINT) are not the child's business.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal != SIGKILL && signal != SIGSTOP) ::sigaction(signal, &default_action, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (in_fd >= 0) {
    ::dup2(in_fd, STDIN_FILENO);
  } else {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
  }
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
}

// The signal a keeper (BecomeKeeper) gets when the convgate thread that started it ends.
constexpr int kKeeperParentGone = SIGUSR2;

// Splits the child in two: this process stays behind as the leader of the command's process
// group, and the call returns in a new child that goes on to exec the command. PR_SET_PDEATHSIG
// reaches only the direct child, so a command started through a shell (`--converter 'sh -c
// ...'`, `--target-exec`) used to leave its own children running when convgate was killed with
// SIGKILL, which cleans up nothing. The keeper gets a catchable signal instead and kills the
// whole group, grandchildren included. Otherwise it waits for the command and ends the way it
// ended (its exit code, or the same signal), so the parent sees the command's status, and
// wait4's rusage, which counts the children the keeper waited for, still covers the command.
// Async-signal-safe calls only, as in SetUpChild.
void BecomeKeeper(pid_t parent, int exec_error_fd) {
  sigset_t watched;
  sigemptyset(&watched);
  for (int signal : {SIGCHLD, kKeeperParentGone, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    sigaddset(&watched, signal);
  }
  sigset_t previous;
  ::sigprocmask(SIG_BLOCK, &watched, &previous);
  ::prctl(PR_SET_PDEATHSIG, kKeeperParentGone);
  if (::getppid() != parent) ::_exit(kExitParentGone);
  const pid_t keeper = ::getpid();
  const pid_t command = ::fork();
  if (command < 0) {
    const int err = errno;
    [[maybe_unused]] ssize_t ignored = ::write(exec_error_fd, &err, sizeof(err));
    ::_exit(kExitExecFailed);
  }
  if (command == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a keeper killed on its own takes the command along
    if (::getppid() != keeper) ::_exit(kExitParentGone);
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    return;
  }
  // Told apart from the convgate it was forked from in ps and /proc/PID/comm (it has the same
  // command line).
  ::prctl(PR_SET_NAME, "convgate-keeper");
  // The keeper holds no end of the command's pipes: the parent sees them close with the command.
  ::close(exec_error_fd);
  ::close(STDIN_FILENO);
  ::close(STDOUT_FILENO);
  ::close(STDERR_FILENO);
  for (;;) {
    siginfo_t info;
    const int signal = ::sigwaitinfo(&watched, &info);
    if (signal == kKeeperParentGone) {
      ::kill(0, SIGKILL);  // the whole group, this keeper included
      ::_exit(kExitParentGone);
    }
    // SIGINT, SIGTERM, ... come to the whole group (convgate signals -pgid): the command has its
    // own copy, and its end decides this one's.
    if (signal != SIGCHLD) continue;
    int status = 0;
    if (::waitpid(command, &status, WNOHANG) != command) continue;
    if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
    const int ended_by = WTERMSIG(status);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    ::sigaction(ended_by, &default_action, nullptr);
    ::kill(keeper, ended_by);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, ended_by);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::_exit(128 + ended_by);  // a signal whose default is not to end the process
  }
}

}  // namespace

namespace internal {

// fork + execve rather than posix_spawn: only a forked child can ask for the parent-death signal
// before it runs. An exec failure comes back through a close-on-exec pipe as the child's errno.
Result<pid_t> SpawnArgv(const std::vector<std::string>& argv, const SubprocessOptions& options,
                        const SpawnFds& fds) {
  int lookup_error = 0;
  const std::string executable = FindExecutable(argv[0], lookup_error);
  if (lookup_error != 0) return SpawnError(argv[0], lookup_error);
  std::vector<std::string> args = argv;
  if (!options.shown_argv0.empty()) args[0] = options.shown_argv0;
  std::vector<std::string> env = MergedEnvironment(options.extra_env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(env);
  int exec_error[2];
  if (::pipe2(exec_error, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  ScopedFd error_read(exec_error[0]);
  ScopedFd error_write(exec_error[1]);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::Unavailable(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    SetUpChild(parent, fds.in, fds.out, fds.err, fds.die_with_thread);
    // Only a child waited for by the thread that started it has a parent-death signal to act on.
    if (fds.die_with_thread) BecomeKeeper(parent, error_write.get());
    if (options.address_space_bytes > 0) {
      const struct rlimit limit = {static_cast<rlim_t>(options.address_space_bytes),
                                   static_cast<rlim_t>(options.address_space_bytes)};
      ::setrlimit(RLIMIT_AS, &limit);
    }
    ::execve(executable.c_str(), c_args.data(), c_env.data());
    const int err = errno;
    [[maybe_unused]] ssize_t ignored = ::write(error_write.get(), &err, sizeof(err));
    ::_exit(kExitExecFailed);
  }
  // Also set here: whichever of parent and child runs first, the group exists before any kill.
  ::setpgid(pid, pid);
  error_write.Reset();
  int err = 0;
  ssize_t n = 0;
  while ((n = ::read(error_read.get(), &err, sizeof(err))) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof(err))) return pid;  // closed by a successful exec
  int ignored_status = 0;
  while (::waitpid(pid, &ignored_status, 0) < 0 && errno == EINTR) {
  }
  return SpawnError(argv[0], err);
}

}  // namespace internal

namespace {

[[noreturn]] void RunChildBody(const std::function<int()>& body, pid_t parent, int out_fd,
                               int err_fd) {
  SetUpChild(parent, -1, out_fd, err_fd, true);
  int code = kExitSoftware;
  try {
    code = body();
  } catch (...) {
    code = kExitSoftware;
  }
  ::_exit(code);
}

// True once `pid` has ended; it stays a zombie (not reaped) so its pid, which is also its
// process group id, cannot be reused before the group is killed.
bool HasEnded(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno != EINTR;  // ECHILD: nothing left to wait for
  }
  return info.si_pid == pid;
}

// The CPU time, in clock ticks, of every process in group `pgid`: utime + stime + cutime + cstime
// (fields 14-17 of /proc/<pid>/stat; what a member reaped stays counted in its parent). Threads
// count in their process. Read by scanning /proc, since a group's members are not listed anywhere.
uint64_t GroupCpuTicks(pid_t pgid) {
  uint64_t total = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;  // it ended meanwhile
    // The command name (field 2) is in parentheses and may hold spaces or ')': fields 3 onward
    // follow the last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    const char* cursor = line.c_str() + close + 1;
    unsigned long long field[16] = {};
    char state = 0;
    // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime
    // cstime
    const int read = std::sscanf(
        cursor, " %c %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &state,
        &field[0], &field[1], &field[2], &field[3], &field[4], &field[5], &field[6], &field[7],
        &field[8], &field[9], &field[10], &field[11], &field[12], &field[13]);
    if (read != 15 || static_cast<pid_t>(field[1]) != pgid) continue;
    total += field[10] + field[11] + field[12] + field[13];
  }
  ::closedir(proc);
  return total;
}

// How often the CPU time of a watched group is read: often enough to find a stall soon after it
// reaches the limit, rarely enough that scanning /proc costs nothing measurable.
double StallCheckInterval(double stall_seconds) { return std::clamp(stall_seconds / 4, 0.05, 1.0); }

// Milliseconds poll() may sleep: until the next deadline, and at most kPollFallbackMs when there
// is no pidfd to wake it on exit. -1 means no limit.
int PollTimeoutMs(double next_deadline, double elapsed, bool have_pidfd) {
  int wait_ms = have_pidfd ? -1 : kPollFallbackMs;
  if (next_deadline > 0) {
    const int until = static_cast<int>(std::ceil((next_deadline - elapsed) * 1000.0));
    wait_ms = wait_ms < 0 ? std::max(until, 0) : std::clamp(until, 0, wait_ms);
  }
  return wait_ms;
}

struct Capture {
  Tail out, err;
  bool out_open = true, err_open = true;
  void Read(const Pipe& out_pipe, const Pipe& err_pipe, size_t limit) {
    if (out_open) out_open = Drain(out_pipe.read.get(), out, limit);
    if (err_open) err_open = Drain(err_pipe.read.get(), err, limit);
  }
};

// Waits for `pid` while capturing both pipes and enforcing the timeout and interrupts, then reaps
// it.
SubprocessResult WaitAndCapture(pid_t pid, Pipe& out, Pipe& err, const SubprocessOptions& options,
                                Clock::time_point start) {
  out.write.Reset();
  err.write.Reset();
  ScopedFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  SubprocessResult result;
  Capture capture;
  {
    // Registered until reaped below: an interrupt that cannot wait for this loop kills the group.
    ScopedChildGroup registered(pid);
    bool term_sent = false, kill_sent = false;
    double kill_at = 0.0;
    // The stall watch: the group's CPU time when it last changed, and when that was.
    const bool watch_stall = options.stall_seconds > 0;
    uint64_t cpu_ticks = watch_stall ? GroupCpuTicks(pid) : 0;
    double progress_at = 0.0;
    double next_stall_check = watch_stall ? StallCheckInterval(options.stall_seconds) : 0.0;
    bool stalled = false;
    while (!HasEnded(pid)) {
      const double elapsed = SecondsSince(start);
      const bool timed_out = options.timeout_seconds > 0 && elapsed >= options.timeout_seconds;
      if (watch_stall && !term_sent && elapsed >= next_stall_check) {
        const uint64_t now_ticks = GroupCpuTicks(pid);
        if (now_ticks != cpu_ticks) {
          cpu_ticks = now_ticks;
          progress_at = elapsed;
        }
        stalled = elapsed - progress_at >= options.stall_seconds;
        next_stall_check = elapsed + StallCheckInterval(options.stall_seconds);
      }
      if (!term_sent && (timed_out || stalled || Interrupted())) {
        ::kill(-pid, SIGTERM);
        term_sent = true;
        result.interrupted_by = InterruptSignal();
        result.timed_out = result.interrupted_by == 0 && timed_out;
        result.hung = result.interrupted_by == 0 && !timed_out && stalled;
        if (result.hung) result.stall_seconds = options.stall_seconds;
        kill_at = elapsed + options.kill_grace_seconds;
      }
      if (term_sent && !kill_sent && elapsed >= kill_at) {
        ::kill(-pid, SIGKILL);
        kill_sent = true;
      }
      double next_deadline = !term_sent ? options.timeout_seconds : (kill_sent ? 0.0 : kill_at);
      if (watch_stall && !term_sent) {
        next_deadline =
            next_deadline > 0 ? std::min(next_deadline, next_stall_check) : next_stall_check;
      }
      // The interrupt descriptor stays readable once signalled, so it is watched only until the
      // group has been told to stop.
      pollfd fds[4] = {{capture.out_open ? out.read.get() : -1, POLLIN, 0},
                       {capture.err_open ? err.read.get() : -1, POLLIN, 0},
                       {pidfd.get(), POLLIN, 0},
                       {term_sent ? -1 : InterruptFd(), POLLIN, 0}};
      ::poll(fds, 4, PollTimeoutMs(next_deadline, elapsed, pidfd.get() >= 0));
      capture.Read(out, err, options.max_captured_bytes);
    }
    // The child has ended but is not reaped, so its group id is still reserved: kill whatever it
    // left running in the group (a helper holding the pipes open), read what is left, then reap.
    ::kill(-pid, SIGKILL);
    capture.Read(out, err, options.max_captured_bytes);
  }
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wait_status)) result.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) result.signal = WTERMSIG(wait_status);
  // The interrupt watcher signals registered groups itself and may have been first: a child that
  // failed while convgate was being interrupted failed because of it.
  const bool failed = result.signal != 0 || result.exit_code != 0;
  if (failed && result.interrupted_by == 0 && Interrupted()) {
    result.interrupted_by = InterruptSignal();
    result.timed_out = false;
    result.hung = false;
  }
  result.seconds = SecondsSince(start);
  capture.out.Finish(options.max_captured_bytes);
  capture.err.Finish(options.max_captured_bytes);
  result.stdout_tail = std::move(capture.out.data);
  result.stderr_tail = std::move(capture.err.data);
  result.stdout_truncated = capture.out.truncated;
  result.stderr_truncated = capture.err.truncated;
  return result;
}

}  // namespace

std::string SubprocessResult::Describe() const {
  if (interrupted_by != 0) {
    return "was stopped: convgate was interrupted by " + SignalName(interrupted_by);
  }
  if (timed_out) return "timed out after " + FormatSeconds(seconds);
  if (hung) return "hung: no CPU progress for " + FormatSeconds(stall_seconds);
  if (signal != 0) {
    return "was killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  }
  return "exited with code " + std::to_string(exit_code);
}

Result<SubprocessResult> RunSubprocess(const std::vector<std::string>& argv,
                                       const SubprocessOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("cannot run an empty command");
  if (Interrupted()) return InterruptedStatus("not starting '" + argv[0] + "'");
  Pipe out, err;
  CONVGATE_RETURN_IF_ERROR(MakePipe(out));
  CONVGATE_RETURN_IF_ERROR(MakePipe(err));
  const Clock::time_point start = Clock::now();
  CONVGATE_ASSIGN_OR_RETURN(
      pid_t pid, internal::SpawnArgv(argv, options, {-1, out.write.get(), err.write.get(), true}));
  return WaitAndCapture(pid, out, err, options, start);
}

Result<SubprocessResult> RunInForkedChild(const std::function<int()>& body,
                                          const SubprocessOptions& options) {
  if (Interrupted()) return InterruptedStatus("not starting a child process");
  Pipe out, err;
  CONVGATE_RETURN_IF_ERROR(MakePipe(out));
  CONVGATE_RETURN_IF_ERROR(MakePipe(err));
  const Clock::time_point start = Clock::now();
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return Status::Unavailable(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) RunChildBody(body, parent, out.write.get(), err.write.get());
  // Also set here: whichever of parent and child runs first, the group exists before any kill.
  ::setpgid(pid, pid);
  return WaitAndCapture(pid, out, err, options, start);
}

std::string TailLines(std::string_view text, size_t max_lines) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (max_lines == 0) return "";
  size_t begin = text.size();
  for (size_t line = 0; line < max_lines; ++line) {
    const size_t newline = begin == 0 ? std::string_view::npos : text.rfind('\n', begin - 1);
    if (newline == std::string_view::npos) return std::string(text);
    begin = newline;
  }
  return std::string(text.substr(begin + 1));
}

}  // namespace convgate
