// The side group: which backend runs each side, an external command for the exec backend, and
// how long one run of that command may take.
#include <cctype>

#include "cli/flag_groups.h"
#include "convgate/backends/registry.h"
#include "convgate/core/command_line.h"
#include "convgate/core/units.h"

namespace convgate::cli {
namespace {

std::string FlagFor(const std::string& role, const std::string& what) {
  return role.empty() ? "--" + what : "--" + role + "-" + what;
}

std::string BackendNames() {
  std::string names;
  for (const std::string& name : backends::AvailableBackends()) names += name + ", ";
  return names + "outputs (saved outputs)";
}

// A command implies backend exec; naming another backend with one, or exec without one, is a
// contradiction the user must resolve.
Status ResolveExec(const SideFlagTarget& side, const std::string& command) {
  const std::string exec_flag = FlagFor(side.role, "exec");
  if (command.empty()) {
    if (*side.backend == "exec") {
      return Status::InvalidArgument("backend 'exec' needs its command: " + exec_flag +
                                     " 'PROGRAM ARGS {model} {inputs} {outputs}'");
    }
    return Status::OK();
  }
  if (!side.backend->empty() && *side.backend != "exec") {
    return Status::InvalidArgument(exec_flag + " runs the exec backend, but backend '" +
                                   *side.backend + "' was asked for that side");
  }
  *side.backend = "exec";
  Result<std::vector<std::string>> argv = SplitCommandLine(command);
  if (!argv.ok()) return argv.status().WithContext(exec_flag);
  side.exec->argv = std::move(argv).value();
  // The backend checks this too; here it is a usage error, found before any model loads.
  Status checked = backends::CheckExecTemplate(side.exec->argv);
  if (checked.ok()) return checked;
  return Status::InvalidArgument(exec_flag + " '" + command + "': " + checked.message());
}

}  // namespace

void AddSideFlags(FlagSet& flags, std::vector<SideFlagTarget> sides) {
  flags.SetGroup("Backends");
  const gate::ExecOptions defaults;
  for (const SideFlagTarget& side : sides) {
    std::string whose = side.role.empty() ? "the model" : side.role;  // "source" -> "SOURCE"
    if (!side.role.empty()) {
      for (char& c : whose) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    std::string* backend = side.backend;
    flags.Add(Flag{.name = FlagFor(side.role, "backend"),
                   .value_name = "NAME",
                   .help = "What runs " + whose + ": " + BackendNames(),
                   .default_text = "from the file's format (.onnx: ort, .pt: torch)",
                   .examples = {"ort"},
                   .apply = [backend](const std::string& value) -> Status {
                     if (value.empty()) return Status::InvalidArgument("the backend is empty");
                     *backend = value;
                     return Status::OK();
                   }});
    flags.Add(Flag{.name = FlagFor(side.role, "exec"),
                   .value_name = "'CMD ARGS'",
                   .help = "Run " + whose +
                           " with an external command (backend exec): {model}, {inputs} and "
                           "{outputs} become paths, one process per sample reading inputs.npz "
                           "and writing outputs.npz; or with {inputs_dir} and {outputs_dir}, one "
                           "process serving every sample (docs/backends.md). Split like a shell, "
                           "nothing expanded",
                   .examples = {"'python3 runner.py {model} --serve {inputs_dir} {outputs_dir}'",
                                "'python3 runner.py {model} {inputs} {outputs}'"},
                   .apply = [](const std::string&) { return Status::OK(); }});
    if (side.role.empty()) continue;
    // One side's runtime settings, so a suspect (the optimizer, a thread count) can be changed on
    // one side while the other stays as it was.
    flags.Add(OptionalIntegerFlag(FlagFor(side.role, "threads"), "N",
                                  "Intra-op threads for " + whose +
                                      " alone (0: the runtime's "
                                      "choice)",
                                  "--threads", 0, 1024, side.exec->threads));
    flags.Add(OptionalIntegerFlag(FlagFor(side.role, "inter-op-threads"), "N",
                                  "Inter-op threads for " + whose + " alone (ONNX Runtime)",
                                  "--inter-op-threads", 0, 1024, side.exec->inter_op_threads));
    flags.Add(OptimizationFlag(FlagFor(side.role, "ort-optimization"), whose + " alone",
                               side.exec->graph_optimization));
  }
  flags.Add(Flag{.name = "--exec-timeout",
                 .value_name = "DURATION",
                 .help = "How long one run of an exec command may take before its process group "
                         "is killed (0: no limit)",
                 .default_text = FormatDuration(defaults.timeout_seconds),
                 .examples = {"120", "10m"},
                 .apply = [sides](const std::string& value) -> Status {
                   CONVGATE_ASSIGN_OR_RETURN(const double seconds, ParseDuration(value));
                   for (const SideFlagTarget& side : sides) side.exec->timeout_seconds = seconds;
                   return Status::OK();
                 }});
  flags.AddCheck([sides](const FlagSet& set) {
    for (const SideFlagTarget& side : sides) {
      const std::vector<std::string>& command = set.Values(FlagFor(side.role, "exec"));
      CONVGATE_RETURN_IF_ERROR(ResolveExec(side, command.empty() ? "" : command.front()));
    }
    return Status::OK();
  });
}

}  // namespace convgate::cli
