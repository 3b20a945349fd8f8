// The pipeline engine's private parts: loaded nodes and one run of the graph over N steps.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convgate/gate/results.h"
#include "convgate/inputs/dataset.h"
#include "convgate/pipeline/pipeline.h"
#include "convgate/pipeline/wiring.h"
#include "convgate/session/side.h"

namespace convgate::pipeline::internal {

// One model of a node, loaded.
struct LoadedSide {
  session::LoadedModel loaded;
  gate::SideRecord record;
  // Inputs and outputs are passed by position, not name: the model's own names differ from the
  // node's declarations (TorchScript's output_0, an export's renamed inputs).
  bool positional_inputs = false;
  bool positional_outputs = false;
};

struct LoadedNode {
  LoadedSide source;
  std::optional<LoadedSide> target;
  std::shared_ptr<void> conversion_hold;  // keeps a --to output alive (ConversionRecord)
  bool converted = false;                 // the target was made by --to
};

// Resolves each node's model (relative to the spec's folder) and loads it; fills the node's
// declarations from the model where the spec leaves them out, and checks those the spec gives
// against what an ONNX model declares. `error` gets kLoad (exit 3) for a model that does not
// load and kFlags (exit 2) for declarations that are missing or contradict the model.
std::vector<LoadedNode> LoadNodes(Spec& spec, const PipelineOptions& options,
                                  std::optional<gate::GateError>& error);

// Loads `path` on `backend` (empty: from the format) for node `node` ("source" / "target").
Result<LoadedSide> LoadSide(const std::string& path, const std::string& backend,
                            const std::string& role, const PipelineOptions& options);

// A tensor from a file: .npy, or the member `member` (empty: the only one) of an .npz or a
// .safetensors file. Errors name the file and the member.
Result<Tensor> ReadTensorFile(const std::filesystem::path& path, const std::string& member,
                              const Limits& limits);

// What a node was given and returned at one step.
struct NodeStep {
  TensorMap inputs;
  TensorMap outputs;
  bool ran = false;
};

// One run of the pipeline: steps[step][node] in spec order, and the pipeline outputs per step
// (each kept only where RunPlan says so: empty otherwise).
struct Trace {
  std::vector<std::vector<NodeStep>> steps;
  std::vector<TensorMap> outputs;
  int64_t bytes = 0;  // what steps and outputs hold (HeldBytes)
};

// Called after each node runs (its step record complete), in run order.
using NodeObserver = std::function<void(int step, size_t node, const NodeStep& record)>;
// Called after each step with its pipeline outputs.
using StepObserver = std::function<void(int step, const TensorMap& outputs)>;

// The memory `tensors` hold: their bytes (a string's characters) and a per-tensor overhead.
int64_t HeldBytes(const TensorMap& tensors);

struct RunPlan {
  const Spec* spec = nullptr;
  const Wiring* wiring = nullptr;
  std::vector<LoadedNode>* nodes = nullptr;
  bool use_targets = false;                        // swap in every node's target where it has one
  const std::vector<TensorMap>* inputs = nullptr;  // pipeline inputs, one map per step
  const std::map<size_t, Tensor>* initial = nullptr;         // feedback edge -> initial value
  const std::map<std::string, Tensor>* overrides = nullptr;  // "node.input" -> --set value
  int steps = 0;
  // Every node's inputs and outputs of every step are kept in Trace::steps (a validation replays
  // and compares them); otherwise a step's are dropped once observed.
  bool keep_records = true;
  bool keep_outputs = true;  // every step's pipeline outputs in Trace::outputs
  // --max-run-bytes: what the run may hold (its kept records and outputs, the feedback state and
  // the step running) besides `held_bytes` held already (the pipeline inputs of every step, an
  // earlier run's trace). A step past it stops the run, naming the step and the figures.
  int64_t max_run_bytes = std::numeric_limits<int64_t>::max();
  int64_t held_bytes = 0;
};

// Runs every node at every step. A node that fails to run stops the run: the Status names the
// node and the step; so does a copy that cannot be allocated (Unavailable) and a run past
// max_run_bytes (FailedPrecondition).
Result<Trace> RunSteps(const RunPlan& plan, const NodeObserver& observe,
                       const StepObserver& on_step = nullptr);

// Runs one node's model on `inputs` (named as the node declares them) and names its outputs as the
// node declares them (by position for positional models). Errors name the node.
Result<TensorMap> RunNode(LoadedSide& side, const NodeSpec& node, const TensorMap& inputs);

// "step 0 passes, steps 5..19 fail: the export does not generalize across re-entry".
StepVerdicts DescribeSteps(const std::vector<bool>& failed_by_step);

}  // namespace convgate::pipeline::internal

namespace convgate::pipeline::internal {

// Runs the source pipeline for report.steps steps with the sanity checks after every node, saves
// its outputs on request, and with targets validates them (validate.h) and, with --per-node,
// looks inside failing nodes. Sets the verdict.
PipelineReport RunAndValidate(const Spec& spec, const Wiring& wiring,
                              std::vector<LoadedNode>& nodes, const inputs::Dataset& dataset,
                              const std::map<size_t, Tensor>& initial,
                              const std::map<std::string, Tensor>& overrides,
                              const PipelineOptions& options, PipelineReport report);

}  // namespace convgate::pipeline::internal
