// Starting a child process, shared by RunSubprocess (subprocess.cc) and ChildProcess
// (child_process.cc). Not API: the rules it follows are subprocess.h's.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/subprocess.h"

namespace convgate::internal {

struct SpawnFds {
  int in = -1;  // the child's stdin; < 0: /dev/null
  int out = -1;
  int err = -1;
  // PR_SET_PDEATHSIG: the child gets SIGKILL when the thread that forked it ends. Right for a
  // child waited for by that thread (RunSubprocess); wrong for one that outlives the call that
  // started it, since that thread may be a short-lived worker (ChildProcess).
  bool die_with_thread = true;
};

// Forks and execs argv[0] (searched in PATH when it has no '/') in its own process group, with
// default signal dispositions and options.extra_env added to the environment. NotFound,
// FailedPrecondition or Unavailable naming the program when it cannot be started.
// REQUIRES: !argv.empty(); the descriptors are open.
Result<pid_t> SpawnArgv(const std::vector<std::string>& argv, const SubprocessOptions& options,
                        const SpawnFds& fds);

}  // namespace convgate::internal
