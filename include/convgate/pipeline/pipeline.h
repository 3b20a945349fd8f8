// `convgate pipeline SPEC.yaml` and `convgate compare A B --feedback OUT=IN`: several models (or
// one stateful model) run step by step, with feedback state, sanity-checked after every node and,
// where nodes have converted targets, validated node by node and end to end.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "convgate/backends/registry.h"
#include "convgate/compare/policy.h"
#include "convgate/convert/convert.h"
#include "convgate/gate/per_node.h"
#include "convgate/gate/workflows.h"
#include "convgate/pipeline/results.h"
#include "convgate/pipeline/spec.h"

namespace convgate::pipeline {

struct PipelineOptions {
  std::filesystem::path spec_path;  // ignored when `spec` is given
  std::optional<Spec> spec;         // compare --feedback builds its one-node spec
  // --steps; 0: 1, or as many steps as --load-inputs holds samples.
  int steps = 0;
  // The data flags: generated pipeline inputs (one sample per step), --load-inputs (one sample per
  // step), --save-outputs (every step's pipeline outputs), threads and limits.
  gate::DataOptions data;
  // --set NODE.INPUT=FILE: a value for a node input every step, or a feedback input's initial
  // value (.npy; .npz or .safetensors holding one tensor or one named INPUT).
  std::vector<std::pair<std::string, std::filesystem::path>> set_values;
  // --to KIND: every node without a `target:` is converted (conversion.kind and its parameters).
  std::optional<convert::ConversionRequest> conversion;
  compare::Policy policy;
  bool strict = false;  // --strict: any node failure fails the gate
  // --per-node: compare --per-node of a failing node's source and target on its captured inputs.
  gate::PerNodeOptions per_node;
  bool describe = false;  // --describe: load and validate, then describe; run nothing
  // --benchmark: after the run, each node with a target has its model and target timed (on
  // generated inputs of the node's declared shapes; gate/bench.h); a failed speed gate fails it.
  gate::BenchmarkOptions benchmark;
  // Turns a node's hf://org/name[@rev]/path model or target into a local file (the CLI passes the
  // hub's FetchHfUri; this module sits below the hub). Null: hf:// ids are refused, named.
  std::function<Result<std::filesystem::path>(const std::string& uri)> fetch_hf;
  // Not owned; must outlive the call.
  backends::BackendFactory* backend_factory = backends::BackendFactory::Default();
};

// Never throws; a failed or errored gate still returns a report. Errors: kFlags (exit 2) for a
// spec that does not parse or whose wiring is wrong, kLoad (exit 3) for a model, target or initial
// value that does not load, kConvert for --to, kRun for a node that fails to run.
PipelineReport RunPipelineGate(const PipelineOptions& options);

// "OUT=IN" of compare --feedback: the model's output OUT becomes its input IN at the next step.
struct FeedbackPair {
  std::string output;
  std::string input;
};
Result<FeedbackPair> ParseFeedbackPair(std::string_view text);

// The one-node spec of `compare SOURCE TARGET --feedback OUT=IN ...`: node "model" runs SOURCE
// (target TARGET), each OUT feeds IN at the next step starting from zeros of IN's declared shape
// (symbolic dims from `dims`, else 1), every other input is a pipeline input and every output a
// pipeline output. Needs the model's declarations, so it loads SOURCE's signature through
// `factory`. kFlags/kLoad errors as RunPipelineGate's.
Result<Spec> FeedbackSpec(const std::string& source, const std::string& source_backend,
                          const std::string& target, const std::string& target_backend,
                          const std::vector<FeedbackPair>& feedback,
                          const std::map<std::string, int64_t>& dims,
                          backends::BackendFactory* factory, const gate::DataOptions& data);

}  // namespace convgate::pipeline
