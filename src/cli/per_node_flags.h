// The per-node validation flags of `compare`: --per-node, --strict, --memory-budget,
// --local-error. Declared once here (STYLE.md section 7); validated before any model loads.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "convgate/core/status.h"
#include "convgate/gate/per_node.h"

namespace convgate::cli {

struct PerNodeFlags {
  bool per_node = false;
  bool strict = false;
  std::string memory_budget;  // empty: gate::DefaultMemoryBudget()
  std::string local_error = "failed";
};
void AddPerNodeFlags(CLI::App& app, PerNodeFlags& flags);
// InvalidArgument quoting the bad text, or naming a per-node flag given without --per-node.
Result<gate::PerNodeOptions> ToPerNodeOptions(const PerNodeFlags& flags, const CLI::App& app);

}  // namespace convgate::cli
