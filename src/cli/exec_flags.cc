#include "exec_flags.h"

#include "convgate/core/command_line.h"

namespace convgate::cli {

void AddExecTimeoutFlag(CLI::App& app, double& seconds) {
  app.add_option("--exec-timeout", seconds,
                 "Seconds each run of an exec command may take before its process group is "
                 "killed (default 600; 0: no limit)")
      ->check(CLI::Range(0.0, 1e7));
}

Result<gate::ExecOptions> ToExecOptions(const std::string& command, double timeout_seconds,
                                        const std::string& flag, std::string& backend) {
  gate::ExecOptions options;
  options.timeout_seconds = timeout_seconds;
  if (command.empty()) {
    if (backend == "exec") {
      return Status::InvalidArgument("backend 'exec' needs its command: " + flag +
                                     " 'PROGRAM ARGS {model} {inputs} {outputs}'");
    }
    return options;
  }
  if (!backend.empty() && backend != "exec") {
    return Status::InvalidArgument(flag + " runs the exec backend, but backend '" + backend +
                                   "' was asked for that side");
  }
  backend = "exec";
  Result<std::vector<std::string>> argv = SplitCommandLine(command);
  if (!argv.ok()) return argv.status().WithContext(flag);
  options.argv = std::move(argv).value();
  // The backend checks this too; here it is a usage error, found before any model loads.
  for (const std::string& arg : options.argv) {
    if (arg.find("{outputs}") != std::string::npos) return options;
  }
  return Status::InvalidArgument(flag + " '" + command +
                                 "' has no {outputs} placeholder: the command would not know "
                                 "where to write outputs.npz");
}

}  // namespace convgate::cli
