// Runs a program the way a user would (argv, no shell) and captures exit code, stdout and stderr.
// For CLI end-to-end tests, which must exercise the real binary (STYLE.md section 6).
#pragma once

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

}  // namespace convgate::testing
