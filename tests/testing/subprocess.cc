#include "testing/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace convgate::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

StartedProcess StartProcess(const std::vector<std::string>& argv) {
  char out_path[] = "/tmp/convgate_test_out_XXXXXX";
  char err_path[] = "/tmp/convgate_test_err_XXXXXX";
  int out_fd = ::mkstemp(out_path);
  int err_fd = ::mkstemp(err_path);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  StartedProcess process;
  process.out_path = out_path;
  process.err_path = err_path;
  pid_t pid = 0;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) process.pid = pid;
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_fd);
  ::close(err_fd);
  return process;
}

ProcessResult WaitProcess(const StartedProcess& process) {
  ProcessResult result;
  if (process.pid > 0) {
    int status = 0;
    while (::waitpid(process.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  result.out = Slurp(process.out_path);
  result.err = Slurp(process.err_path);
  ::unlink(process.out_path.c_str());
  ::unlink(process.err_path.c_str());
  return result;
}

bool ProcessIsRunning(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // "pid (comm) S ...": the state follows the last ')' (comm may itself contain parentheses).
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return false;
  const char state = text[paren + 2];
  return state != 'Z' && state != 'X';
}

bool WaitFor(const std::function<bool()>& condition, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

pid_t ReadPidFile(const std::string& path) {
  std::ifstream in(path);
  long pid = -1;
  if (!(in >> pid) || pid <= 0) return -1;
  return static_cast<pid_t>(pid);
}

ProcessResult RunProcess(const std::vector<std::string>& argv) {
  return WaitProcess(StartProcess(argv));
}

}  // namespace convgate::testing
