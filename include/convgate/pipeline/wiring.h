// The load-time check of a pipeline's wiring (LEAPP's InferenceManager: "validates pipeline
// connection shape/dtype compatibility"), run once every node's declarations are known and before
// anything runs.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/pipeline/spec.h"

namespace convgate::pipeline {

// How the graph runs, once it is known to be sound.
struct Wiring {
  std::vector<size_t> order;  // node indices, each after every node it takes an in-step edge from
  // feeds[node][input]: the index in Spec::edges of the one edge that feeds that input, or -1 when
  // it is set from outside (--set).
  std::vector<std::vector<int>> feeds;
  std::vector<size_t> feedback;  // indices of feedback edges
  // Each pipeline input's declaration: that of the node inputs it feeds (named after it).
  std::vector<TensorInfo> inputs;
  // Symbolic dims the declarations tie to a fixed size across edges: "batch=1 (edge a.x -> b.y)".
  std::vector<std::string> bindings;
};

// Checks, collecting every violation: each node input is fed exactly once (by a pipeline input, an
// edge, a feedback edge, or an entry of `set` "node.input"); every endpoint names a declared
// tensor; the two sides of every edge agree in dtype, rank, fixed dims and symbolic bindings
// (symbols are pipeline-wide: "batch" means one size wherever it appears); every pipeline input's
// consumers agree; cycles run only through feedback edges; every feedback edge's initial value
// (`initial`: the tensor read or made for it, by edge index) fits the input it feeds.
// InvalidArgument with one line per violation, each naming the node, the edge (with the spec's
// line) and both declarations.
Result<Wiring> ValidateWiring(const Spec& spec, const std::set<std::string>& set,
                              const std::map<size_t, const Tensor*>& initial);

}  // namespace convgate::pipeline
