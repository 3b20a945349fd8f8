// What `convgate pipeline` (and `compare --feedback`) produce: plain values the report module
// renders. Per-step records reuse the gate's: a node's steps are the samples of a RunReport
// (sanity) or a CompareReport (comparison), "sample i" being step i as in LEAPP's cached
// re-entry examples.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "convgate/compare/policy.h"
#include "convgate/gate/results.h"

namespace convgate::pipeline {

// NaN/Inf that a node's output held at one step of the run with the targets swapped in.
struct NonFiniteEvent {
  int step = 0;
  std::string output;
  int64_t nan = 0;
  int64_t inf = 0;
  // "introduced": the node's inputs were finite (it made them); "inherited": an input already
  // held NaN/Inf, coming from `from` ("embedding.emb" or a pipeline input).
  std::string origin;
  std::string from;
};

// Steps a node passed and failed, and the sentence that says so.
struct StepVerdicts {
  std::vector<int> failed;  // in order
  int steps = 0;
  // "step 0 passes, steps 5..19 fail: the export does not generalize across re-entry".
  std::string sentence;
};

struct NodeResult {
  std::string name;
  // The source run: the node's model and the end-to-end sanity checks of its outputs at every
  // step (sample = step).
  gate::RunReport source;
  // With a target: the target on the inputs the source pipeline gave this node at each step,
  // compared with the source node's outputs (LEAPP's per-node validation over cached examples).
  std::optional<gate::CompareReport> replay;
  StepVerdicts replay_steps;
  // With targets: this node's outputs in the pipeline run with every target swapped in, against
  // the source run's, step by step: drift through feedback shows here.
  std::optional<gate::CompareReport> swapped;
  StepVerdicts swapped_steps;
  std::vector<NonFiniteEvent> non_finite;  // in the swapped run
  // --per-node: compare --per-node of source and target on the steps the replay failed.
  std::optional<gate::CompareReport> per_node;
  std::string per_node_note;  // why it did not run, when asked and it could not
  std::string conversion;     // --to: "KIND: the converted model's path"; empty without --to
  bool passed = true;         // sanity, and with a target its replay and swapped comparisons
};

struct PipelineReport {
  std::string spec;  // the YAML's path, or "compare --feedback"
  std::string name;
  int steps = 0;
  // --describe: the pipeline's interface and run order.
  std::vector<std::string> inputs;    // "audio float32[1, 64]"
  std::vector<std::string> outputs;   // "label <- classifier.logits"
  std::vector<std::string> feedback;  // "rnn.h_out -> rnn.h (initial zeros float32[1, 16])"
  std::vector<std::string> order;     // node names
  std::vector<std::string> bindings;  // symbolic dims tied by edges
  gate::DatasetRecord data;           // the pipeline inputs, one sample per step
  std::vector<NodeResult> nodes;      // in run order
  // Pipeline outputs: sanity of the source run, and with targets the swapped run compared with
  // the source run at every step. Only these gate by default; --strict gates on nodes too.
  gate::RunReport outputs_sanity;
  std::optional<gate::CompareReport> outputs_compared;
  StepVerdicts outputs_steps;
  compare::Policy policy;
  bool strict = false;
  bool validated = false;  // some node has a target
  std::string outputs_saved_to;
  // --benchmark: each node with a target, timed (its model as the source, its target).
  struct NodeBenchmark {
    std::string node;
    bench::BenchmarkRecord benchmark;
  };
  std::vector<NodeBenchmark> benchmarks;
  gate::Verdict verdict = gate::Verdict::kError;
  std::optional<gate::GateError> error;
};

}  // namespace convgate::pipeline
