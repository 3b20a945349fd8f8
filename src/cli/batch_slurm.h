// `convgate batch --slurm`: the flags and the flow (write the array script, submit it, wait,
// print the summary merged from the store). Kept apart from cmd_batch.cc, which only adds these
// flags and hands over when --slurm is given.
#pragma once

#include <string>
#include <vector>

#include "cli/flag.h"
#include "convgate/batch/batch.h"
#include "convgate/batch/manifest.h"
#include "convgate/core/exit_code.h"

namespace convgate::cli {

struct SlurmCliOptions {
  bool slurm = false;
  int tasks = 0;  // 0: batch::SlurmTaskCount's default
  std::vector<std::string> sbatch_args;
  bool no_wait = false;
  // How often the wait polls squeue and the store: a second keeps the summary within a second
  // of the array's end at a cost of one squeue call a second on the controller.
  double poll_seconds = 1.0;
};

// --slurm, --tasks, --sbatch-arg, --no-wait, and the rules between them and batch's own flags
// (--shard and -j belong to the tasks; the Slurm flags need --slurm).
void AddSlurmFlags(FlagSet& flags, SlurmCliOptions& options);

// The whole --slurm flow for a manifest already read. `batch` carries --out, --store (already
// resolved to its default), --resume and --timeout. Returns the exit code (batch's rules; 3 when
// Slurm is missing, refuses the job or stops answering).
ExitCode RunSlurmBatch(const batch::Manifest& manifest, const SlurmCliOptions& slurm,
                       const batch::BatchOptions& batch, bool quiet, bool json);

}  // namespace convgate::cli
