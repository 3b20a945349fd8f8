#include "per_node_flags.h"

namespace convgate::cli {

void AddPerNodeFlags(CLI::App& app, PerNodeFlags& flags) {
  app.add_flag("--per-node", flags.per_node,
               "Also compare every intermediate tensor both models name, in topological order, "
               "and report the first divergent node, the culprit and where NaN/Inf came from "
               "(two ONNX models on ort or opencv)");
  app.add_flag("--strict", flags.strict,
               "With --per-node: a failed or errored intermediate fails the gate (default: only "
               "outputs gate, intermediate failures are reported)");
  app.add_option("--memory-budget", flags.memory_budget,
                 "With --per-node: bytes of intermediate tensors held at once, both sides "
                 "(2GiB, 512MiB; default: a quarter of physical memory); smaller budgets take "
                 "more runs");
  app.add_option("--local-error", flags.local_error,
                 "With --per-node: run these target nodes alone on the source's tensors to "
                 "measure the error each adds by itself: failed (default), all, none");
}

Result<gate::PerNodeOptions> ToPerNodeOptions(const PerNodeFlags& flags, const CLI::App& app) {
  gate::PerNodeOptions options;
  options.enabled = flags.per_node;
  options.strict = flags.strict;
  if (!flags.per_node) {
    for (const char* name : {"--strict", "--memory-budget", "--local-error"}) {
      if (app.count(name) > 0) {
        return Status::InvalidArgument(std::string(name) + " has no effect without --per-node");
      }
    }
    return options;
  }
  if (!flags.memory_budget.empty()) {
    CONVGATE_ASSIGN_OR_RETURN(options.memory_budget_bytes,
                              gate::ParseByteSize(flags.memory_budget));
  }
  CONVGATE_ASSIGN_OR_RETURN(options.local_error, gate::ParseLocalErrorMode(flags.local_error));
  return options;
}

}  // namespace convgate::cli
