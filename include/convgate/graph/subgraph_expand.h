// Bringing If/Loop/Scan bodies into the main graph, so that per-node validation can mark their
// tensors as outputs and match them like any other: the taken branch of an If is inlined in place
// of the If, a Loop or Scan whose iteration count is known is unrolled. Runtimes (ONNX Runtime)
// expose main-graph values only; a body's values exist only inside the subgraph's own executor.
//
// Which branch is taken and how many iterations run depend on the inputs, so the caller evaluates
// the values each site names (condition, trip_count, counted_by: by running the model, all are
// main- graph values) and passes the decision back. Expanding keeps the model's function: its
// outputs are computed by the same operations on the same values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::graph {

// An If, Loop or Scan node of the main graph (default domain).
struct SubgraphSite {
  size_t node_index = 0;  // in the main graph
  std::string node;       // its name, or its first output's when unnamed
  std::string op_type;    // "If", "Loop", "Scan"
  // Main-graph values whose captured tensors decide the expansion (empty when absent):
  std::string condition;   // If: the condition; Loop: the initial condition
  std::string trip_count;  // Loop: M
  // Loop: its first scan output when the body's condition is not constant true (its first dim
  // counts the iterations that ran); Scan: its first scan input (its length along scan_axis).
  std::string counted_by;
  // Loop: the body's condition output is its condition input passed through, or constant true,
  // so the loop runs exactly its trip count.
  bool loop_runs_trip_count = false;
  int scan_axis = 0;  // Scan: the first scan input's axis (may be negative)
  // Values the site's bodies produce, nested bodies included, per attribute ("then_branch",
  // "else_branch", "body"): what per-node validation could match once expanded.
  std::vector<std::pair<std::string, std::vector<std::string>>> body_values;
  std::string unsupported;  // why the site cannot be expanded whatever the probes say
};

// The main graph's If/Loop/Scan nodes in file order. Errors as ParseModelProto (DataLoss naming
// `path`).
Result<std::vector<SubgraphSite>> ListSubgraphSites(std::string_view model_bytes,
                                                    const std::filesystem::path& path);
// The same from the file, read without the main graph's initializer data (ParseModelStructureFile)
// so that asking costs little memory for a model without subgraphs.
Result<std::vector<SubgraphSite>> ListSubgraphSitesInFile(const std::filesystem::path& path);

// How to expand one site.
struct SiteExpansion {
  size_t node_index = 0;
  bool then_branch = true;  // If
  int64_t iterations = 0;   // Loop, Scan: >= 1
};

struct ExpandedModel {
  std::string bytes;  // serialized
  // Per expanded site (its node index in the input): the values its copied body nodes produce,
  // under their new names, in graph order.
  std::map<size_t, std::vector<std::string>> values;
  // Per expanded site: the SubgraphSite::node names of the If/Loop/Scan nodes copied out of its
  // bodies (sites of the next expansion).
  std::map<size_t, std::vector<std::string>> nested;
};

// The model with each listed site replaced by its expansion: an If by the nodes of the
// chosen branch, a Loop or Scan by `iterations` copies of its body (iteration numbers, condition
// and state wired from one copy to the next, scan inputs sliced with Gather, scan outputs stacked
// with Unsqueeze and Concat), and Identity nodes producing the site's outputs under their names.
// Inlined values and node names keep their body names when no main-graph name collides; unrolled
// copies are named "<site>/iter<k>/<name>", colliding inlined ones "<site>/<branch>/<name>".
// Initializers of the bodies move to the main graph under the same names. Sites are given by
// main-graph index; InvalidArgument for an index that is not a site, Unimplemented for a site
// whose `unsupported` is set.
Result<ExpandedModel> ExpandSubgraphs(std::string_view model_bytes,
                                      const std::vector<SiteExpansion>& expansions,
                                      const std::filesystem::path& path);

}  // namespace convgate::graph
