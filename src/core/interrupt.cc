#include "convgate/core/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "convgate/core/numbers.h"

namespace convgate::internal {

// Everything interruption keeps, in one object per process, shared by the binary and every
// module it loads (backends, the PostgreSQL store). Each module links its own copy of core, so
// with file-level globals a runner the openvino module started was registered where the
// watcher never looked: SIGTERM waited out the whole grace and left the runner's temporary
// folder behind. The executable exports convgate_interrupt_state (src/cli/CMakeLists.txt:
// --export-dynamic-symbol), and a module's reference to it binds to the executable's at load
// (ELF symbol interposition), so every copy of this file finds the same state.
struct InterruptState {
  std::atomic<int> signal{0};
  // One byte per signal goes to the wake pipe, which the watcher reads. The first signal also
  // writes to the level pipe, which nobody reads, so it stays readable: InterruptFd().
  std::atomic<int> wake_write{-1};
  std::atomic<int> level_read{-1};
  std::atomic<int> level_write{-1};
  std::mutex mutex;
  std::set<pid_t> groups;
  std::set<std::filesystem::path> temp_paths;
};

}  // namespace convgate::internal

// A pointer, zero-initialized at load: no constructor runs for it, so a module loaded later never
// re-initializes the state the executable already uses.
extern "C" __attribute__((visibility("default"))) std::atomic<convgate::internal::InterruptState*>
    convgate_interrupt_state;
std::atomic<convgate::internal::InterruptState*> convgate_interrupt_state{nullptr};

namespace convgate {
namespace {

using Clock = std::chrono::steady_clock;

// The handler only touches the atomics: lock-free atomics and write(2) are async-signal-safe.
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<internal::InterruptState*>::is_always_lock_free);

// The one state of the process (see InterruptState). Never destroyed: the watcher may still use
// it while static destructors run at exit.
internal::InterruptState& State() {
  internal::InterruptState* state = convgate_interrupt_state.load(std::memory_order_acquire);
  if (state != nullptr) return *state;
  auto* fresh = new internal::InterruptState;
  if (convgate_interrupt_state.compare_exchange_strong(state, fresh)) return *fresh;
  delete fresh;  // another thread (or module) made it first
  return *state;
}

void OnSignal(int signal) {
  const int saved_errno = errno;
  int none = 0;
  const char byte = static_cast<char>(signal);
  if (State().signal.compare_exchange_strong(none, signal)) {
    [[maybe_unused]] ssize_t ignored = ::write(State().level_write.load(), &byte, 1);
  }
  [[maybe_unused]] ssize_t ignored = ::write(State().wake_write.load(), &byte, 1);
  errno = saved_errno;
}

void SignalGroups(int signal) {
  internal::InterruptState& registry = State();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (pid_t group : registry.groups) ::kill(-group, signal);
}

// Waits up to `timeout_ms` (-1: forever) for a byte on `fd`; true when one was read.
bool ReadByte(int fd, int timeout_ms) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      wait_ms = static_cast<int>(std::max<int64_t>(left.count(), 0));
    }
    pollfd entry{fd, POLLIN, 0};
    const int ready = ::poll(&entry, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    char byte = 0;
    if (::read(fd, &byte, 1) == 1) return true;
    if (errno != EINTR && errno != EAGAIN) return false;
  }
}

// The last resort: the main flow did not finish in time, or the user insisted.
[[noreturn]] void EndProcess(const std::string& why) {
  SignalGroups(SIGKILL);
  std::vector<std::filesystem::path> paths;
  {
    internal::InterruptState& registry = State();
    std::lock_guard<std::mutex> lock(registry.mutex);
    paths.assign(registry.temp_paths.begin(), registry.temp_paths.end());
  }
  for (const std::filesystem::path& path : paths) {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  const std::string message = "convgate: " + why + "\n";
  [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, message.data(), message.size());
  ::_exit(128 + State().signal.load());
}

void Watch(int wake_read) {
  while (!ReadByte(wake_read, -1)) {
  }
  const std::string name = SignalName(State().signal.load());
  SignalGroups(SIGTERM);
  const int grace_ms = static_cast<int>(std::lround(kInterruptGraceSeconds * 1000.0));
  if (ReadByte(wake_read, grace_ms)) {
    EndProcess("interrupted again (" + name + "): stopping now");
  }
  EndProcess("interrupted by " + name + " and not stopped within " +
             FormatSignificant(kInterruptGraceSeconds) + " s: stopping now");
}

// A shell starts background jobs with SIGINT ignored, and such a job must stay deaf to Ctrl-C.
bool WasIgnored(int signal) {
  struct sigaction old {};
  return ::sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_IGN;
}

void Install() {
  int wake[2], level[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) return;
  if (::pipe2(level, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(wake[0]);
    ::close(wake[1]);
    return;
  }
  // The handler must never block, whatever the watcher is doing.
  ::fcntl(wake[1], F_SETFL, O_NONBLOCK);
  State().wake_write = wake[1];
  State().level_read = level[0];
  State().level_write = level[1];
  std::thread(Watch, wake[0]).detach();
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // Restarting keeps library code that does not expect EINTR (ONNX Runtime, libzip) unaware of
  // the signal; convgate's own waits poll InterruptFd() instead.
  action.sa_flags = SA_RESTART;
  for (int signal : {SIGINT, SIGTERM}) {
    if (!WasIgnored(signal)) ::sigaction(signal, &action, nullptr);
  }
}

}  // namespace

void InstallInterruptHandling() {
  static std::once_flag once;
  std::call_once(once, Install);
}

int InterruptSignal() { return State().signal.load(); }

bool Interrupted() { return State().signal.load() != 0; }

std::string SignalName(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

Status InterruptedStatus(std::string_view context) {
  std::string message = "interrupted by " + SignalName(InterruptSignal());
  if (!context.empty()) message = std::string(context) + ": " + message;
  return Status::Unavailable(std::move(message));
}

int InterruptFd() { return State().level_read.load(); }

bool SleepUnlessInterrupted(double seconds) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(seconds, 0.0)));
  while (!Interrupted()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return true;
    pollfd entry{InterruptFd(), POLLIN, 0};
    ::poll(&entry, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
  }
  return false;
}

ScopedChildGroup::ScopedChildGroup(pid_t group) : group_(group) {
  internal::InterruptState& registry = State();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.groups.insert(group_);
}

ScopedChildGroup::~ScopedChildGroup() {
  internal::InterruptState& registry = State();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.groups.erase(group_);
}

void RegisterTempPath(const std::filesystem::path& path) {
  internal::InterruptState& registry = State();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.temp_paths.insert(path);
}

void UnregisterTempPath(const std::filesystem::path& path) {
  internal::InterruptState& registry = State();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.temp_paths.erase(path);
}

}  // namespace convgate
