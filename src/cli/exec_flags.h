// Flags of the "exec" backend: the command template of each side and the per-run timeout.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "convgate/core/status.h"
#include "convgate/gate/workflows.h"

namespace convgate::cli {

// --exec-timeout SECONDS (default 600; 0 means none).
void AddExecTimeoutFlag(CLI::App& app, double& seconds);

// One side's exec settings from its command flag (`flag` names it in messages: "--target-exec").
// The command is split into argv by SplitCommandLine (core/command_line.h: whitespace separates,
// '...' and "..." group, nothing is expanded). A command implies backend "exec": `backend` is set
// to it when empty, and naming another backend with a command is InvalidArgument; so is
// --*-backend exec without a command. An empty command and no exec backend give empty options.
Result<gate::ExecOptions> ToExecOptions(const std::string& command, double timeout_seconds,
                                        const std::string& flag, std::string& backend);

}  // namespace convgate::cli
