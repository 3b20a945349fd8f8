// The per-node group: intermediate tensors, gating on them, and the memory they may take.
#include "cli/flag_groups.h"
#include "convgate/core/units.h"

namespace convgate::cli {
namespace {

Status RefuseWithoutPerNode(const FlagSet& flags) {
  if (flags.Given("--per-node")) return Status::OK();
  for (const char* name : {"--strict", "--memory-budget", "--local-error"}) {
    if (flags.Given(name)) {
      return Status::InvalidArgument(std::string(name) + " has no effect without --per-node");
    }
  }
  return Status::OK();
}

}  // namespace

void AddPerNodeFlags(FlagSet& flags, gate::PerNodeOptions& options, PerNodeUse use) {
  flags.SetGroup("Per-node validation");
  const gate::PerNodeOptions defaults;
  if (use == PerNodeUse::kOptional) {
    flags.Add({
        SwitchFlag("--per-node",
                   "Also compare every intermediate tensor both models name, in topological "
                   "order, and report the first divergent node, the culprit and where NaN/Inf "
                   "came from (two ONNX models on ort or opencv)",
                   options.enabled),
        SwitchFlag("--strict",
                   "With --per-node: a failed or errored intermediate fails the gate (else only "
                   "outputs gate and intermediate failures are reported)",
                   options.strict),
    });
    flags.AddCheck(RefuseWithoutPerNode);
  }
  if (use == PerNodeUse::kPipeline) {
    flags.Add({
        SwitchFlag("--per-node",
                   "Inside each node whose target fails, compare every intermediate tensor on "
                   "the inputs of its failing steps (two ONNX models)",
                   options.enabled),
        SwitchFlag("--strict",
                   "Any node failure fails the gate (else only the pipeline outputs "
                   "gate and node failures are reported)",
                   options.strict),
    });
  }
  flags.Add({
      Flag{.name = "--memory-budget",
           .value_name = "SIZE",
           .help = "Bytes of intermediate tensors held at once, both sides; smaller budgets take "
                   "more runs",
           .default_text = "48MiB, or a quarter of usable memory when that is less",
           .examples = {"512MiB", "2GiB", "1.5G"},
           .apply = [&options](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(options.memory_budget_bytes, ParseByteSize(value));
             if (options.memory_budget_bytes > 0) return Status::OK();
             return Status::InvalidArgument("a memory budget of 0 bytes holds nothing");
           }},
      Flag{.name = "--local-error",
           .value_name = "failed|all|none",
           .help = "Which target nodes run alone on the source's tensors to measure the error "
                   "each adds by itself",
           .default_text = std::string(gate::LocalErrorModeName(defaults.local_error)),
           .examples = {"all"},
           .apply = [&options](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(options.local_error, gate::ParseLocalErrorMode(value));
             return Status::OK();
           }},
  });
}

}  // namespace convgate::cli
