// The job-array script `convgate batch --slurm` submits, and the sbatch arguments it accepts.
#include <algorithm>
#include <cstdio>

#include "convgate/batch/slurm.h"

namespace convgate::batch {
namespace {

// Single-quoted for bash: every character literal, a ' written as '\''.
std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The spellings of one sbatch option: "--array", "--array=..." and the short "-a", "-a...".
bool IsSbatchOption(const std::string& arg, const std::string& long_name, char short_name) {
  if (arg == long_name || arg.rfind(long_name + "=", 0) == 0) return true;
  return short_name != 0 && arg.size() >= 2 && arg[0] == '-' && arg[1] == short_name;
}

}  // namespace

int SlurmTaskCount(int requested, int entries) {
  if (requested > 0) return requested;
  return std::max(1, std::min(entries, kDefaultSlurmTasks));
}

Status CheckSbatchArgs(const std::vector<std::string>& args) {
  struct Refused {
    const char* long_name;
    char short_name;
    const char* why;
  };
  static const Refused kRefused[] = {
      {"--array", 'a', "the array's size is --tasks"},
      {"--output", 'o', "the task logs must be in OUT/slurm, where the summary reads them"},
      {"--error", 'e', "the task logs must be in OUT/slurm, where the summary reads them"},
      {"--parsable", 0, "convgate already asks for it"},
      {"--wait", 'W', "convgate waits itself (or not, with --no-wait)"},
      {"--wrap", 0, "the script is convgate's"},
  };
  for (const std::string& arg : args) {
    if (arg.empty() || arg[0] != '-') {
      return Status::InvalidArgument(
          "--sbatch-arg takes one sbatch option per flag, as "
          "--sbatch-arg=--partition=gpu, not '" +
          arg + "'");
    }
    for (const Refused& refused : kRefused) {
      if (IsSbatchOption(arg, refused.long_name, refused.short_name)) {
        return Status::InvalidArgument("--sbatch-arg '" + arg + "' is not allowed: " + refused.why);
      }
    }
  }
  return Status::OK();
}

std::filesystem::path SlurmTaskLog(const std::filesystem::path& out_dir, const std::string& job_id,
                                   int task) {
  return out_dir / "slurm" / (job_id + "_" + std::to_string(task) + ".log");
}

std::string SbatchScript(const SlurmArrayOptions& options) {
  const std::string count = std::to_string(options.tasks);
  std::string script =
      "#!/bin/bash\n"
      "# Written by `convgate batch --slurm`: task I of this array runs the manifest's share I\n"
      "# (`--shard I/" +
      count +
      "`) into the shared store. Submit it again with `sbatch` to rerun it as is.\n"
      "#SBATCH --job-name=convgate-batch\n"
      "#SBATCH --array=0-" +
      std::to_string(options.tasks - 1) + "\n" +
      "#SBATCH --output=" + (options.out_dir / "slurm" / "%A_%a.log").string() + "\n" +
      "set -euo pipefail\n"
      "# Jobs at once in this task: the CPUs Slurm gave it (--cpus-per-task), else 1.\n"
      "exec " +
      ShellQuote(options.convgate) + " batch " + ShellQuote(options.manifest.string()) +
      " --shard \"$SLURM_ARRAY_TASK_ID/" + count + "\" --store " + ShellQuote(options.store) +
      " --out " + ShellQuote(options.out_dir.string()) +
      " -j \"${SLURM_CPUS_PER_TASK:-1}\" --quiet";
  if (options.resume) script += " --resume";
  if (options.resume && options.skip_errors) script += " --skip-errors";
  if (options.timeout_seconds > 0) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%gs", options.timeout_seconds);
    script += std::string(" --timeout ") + seconds;
  }
  return script + "\n";
}

}  // namespace convgate::batch
