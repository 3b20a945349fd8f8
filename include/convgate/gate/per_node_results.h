// What `compare --per-node` produces (LEAPP's per-node validation): every intermediate tensor the
// source and target both name, compared in the target's topological order under the outputs'
// policy, with the error each failing node adds by itself. Plain values the report module renders;
// a later `reduce` takes the culprit's node name and input tensor names from here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/compare/noise_floor.h"

namespace convgate::gate {

// Which nodes are re-run alone on the source's tensors (--local-error).
enum class LocalErrorMode { kNone, kFailed, kAll };
std::string_view LocalErrorModeName(LocalErrorMode mode);  // "none", "failed", "all"

// One tensor on one sample, condensed from compare::TensorComparison (the full comparison of every
// intermediate of every sample would hold far more than the report needs).
struct NodeSampleResult {
  int sample = 0;  // LEAPP's "sample N" label
  bool passed = false;
  std::string source_desc;  // "float32[1, 8, 4, 4]"
  std::string target_desc;
  int64_t elements = 0;
  int64_t mismatches = 0;  // elements outside the tolerance
  double max_abs_error = 0.0;
  double mean_abs_error = 0.0;
  double max_rel_error = 0.0;
  double p99_abs_error = 0.0;
  double cosine = 0.0;
  double snr_db = 0.0;  // +Inf when equal; -1e300 when not computed (non-floating)
  double atol = 0.0;    // the tolerance the tensor was judged under
  double rtol = 0.0;
  // Calibrated (PerNodeOptions::calibrate): max_abs_error over the tensor's noise floor (its
  // NoiseFloor::max_abs; +Inf when the floor is 0 and the error is not); -1 uncalibrated.
  double floor_multiple = -1.0;
  double source_min = 0.0, source_max = 0.0;  // finite value ranges
  double target_min = 0.0, target_max = 0.0;
  int64_t source_non_finite = 0;      // NaN and Inf in the source
  int64_t target_non_finite = 0;      // NaN and Inf in the target
  int64_t introduced_non_finite = 0;  // non-finite in the target only: introduced_nan + _inf
  int64_t introduced_nan = 0;
  int64_t introduced_inf = 0;
  int64_t inherited_non_finite = 0;   // non-finite in the source, differing in the target
  std::vector<std::string> failures;  // the comparison's sentences; empty when passed
};

// The error a node adds by itself: the target's node alone (a one-node model with its
// initializers, on the target's backend) fed the source's tensors for its inputs, compared with the
// source's tensor. Inputs the source has no tensor for are fed the target's own tensor and listed.
struct LocalError {
  bool computed = false;
  std::string error;  // why it could not be computed (computed false)
  int sample = 0;     // the node's first failing sample (sample 0 under --local-error all)
  NodeSampleResult result;
  std::vector<std::string> inputs_from_source;  // the sample's inputs count as the source's
  std::vector<std::string> inputs_from_target;
  // Inputs fed as the target computes them from the source's values: "'conv' cast float32 ->
  // float16" (a float16 node gets the source's tensor rounded to float16, as the target's own
  // casts round it), "'Resize_output_cast_0' <- the source's 'r'" (a Cast's input the source has
  // no tensor for: the value the Cast passes on, which the source has under its output's name).
  std::vector<std::string> inputs_cast;
  // Target nodes run with the node, in file order, when its inputs or its output pass through
  // quantization the source does not have (a QDQ target's QuantizeLinear and DequantizeLinear
  // around a Conv, an int8-dynamic target's DynamicQuantizeLinear, ConvInteger and rescaling):
  // the quantized layer is run as one unit on the source's tensors, so its error is its own.
  std::vector<std::string> run_with;
  // Every element of the node's output alone is within half an ulp (of `rounding_dtype`, the
  // narrowest floating type among its fed inputs and its output) of the source's value: the node
  // computes as exactly as that dtype can, so it is never the culprit, whatever the tolerance
  // (a Cast to float16 fails a float32 tolerance by rounding alone).
  bool within_rounding = false;
  std::string rounding_dtype;
};

enum class NodeStatus { kPassed, kFailed, kErrored };
std::string_view NodeStatusName(NodeStatus status);  // "passed", "failed", "errored"

// One matched tensor: a target node's output that the source also produces.
struct NodeCheck {
  int node_index = 0;               // in the target graph (file order is topological order)
  std::string node;                 // the target node's name; may be empty in ONNX
  std::string op_type;              // "Conv"; "<domain>.<op>" outside the default domain
  std::vector<std::string> inputs;  // the node's input tensor names ("" = omitted optional)
  std::string tensor;               // the output compared (the source's name)
  // The target's tensor holding `tensor`'s value when it has another name: in a QDQ-quantized
  // target, T's consumers read T_DequantizeLinear_Output (T quantized and dequantized), and a
  // quantizer may have dropped a Relu whose clamp the QuantizeLinear now does, so T itself is not
  // the source's value. Empty: the same name.
  std::string target_tensor;
  // An OpenVINO IR target: the source nodes whose computation this layer carries, in the source's
  // order (the IR's rt_info fused_names, and source nodes whose tensors the IR no longer has and
  // which only feed this layer). Empty for ONNX targets.
  std::vector<std::string> fused;
  NodeStatus status = NodeStatus::kPassed;
  std::string error;  // errored: why the tensor could not be fetched
  std::vector<NodeSampleResult> samples;
  int first_failing_sample = -1;
  double max_abs_error = 0.0;  // over samples
  // Calibrated: how far the source differs from itself on this tensor under a benign change
  // (PerNodeReport::calibration), over every sample. Its atol, when a default, was raised to
  // compare::kNoiseFloorFactor times the floor's max_abs.
  std::optional<compare::NoiseFloor> noise_floor;
  std::optional<LocalError> local;

  const std::string& TargetTensor() const { return target_tensor.empty() ? tensor : target_tensor; }
};

// LEAPP's summary, counted over matched tensors (unmatched: named by one side only).
struct PerNodeSummary {
  int passed = 0;
  int failed = 0;
  int errored = 0;
  int unmatched = 0;  // target tensors the source lacks plus source tensors the target lacks
};

// Where non-finite values come from, in topological order.
struct NonFiniteOrigin {
  int introduced = -1;  // index into PerNodeReport::nodes: first NaN/Inf in the target only
  int introduced_sample = -1;
  int inherited = -1;  // first node whose source tensor is already non-finite
  int inherited_sample = -1;
};

// A value of a subgraph body that per-node validation did not compare, and why.
struct UnmatchedValue {
  std::string tensor;
  std::string reason;
};

// An If, Loop or Scan node of one side and what per-node validation did with its bodies
// (gate/per_node/subgraphs.cc): a taken If branch is inlined and a Loop or Scan unrolled into the
// main graph, so the body's values are matched by name like any other; a node that could not be
// expanded says why, and its bodies' values are listed as unmatched with that reason.
struct SubgraphCheck {
  std::string side;     // "source", "target"
  std::string node;     // its name in the expanded graph (carrying an unrolled parent's prefix)
  std::string op_type;  // "If", "Loop", "Scan"
  std::string parent;   // the expanded node whose body held it; "" for the main graph
  bool expanded = false;
  std::string expansion;                  // expanded: "then_branch", "else_branch", "4 iterations"
  std::string reason;                     // not expanded: why
  std::vector<std::string> matched;       // body values compared
  std::vector<UnmatchedValue> unmatched;  // body values not compared
  int64_t not_taken = 0;                  // If: values of the branch not taken (never computed)
};

struct PerNodeReport {
  std::string local_error_mode;  // LocalErrorModeName
  bool strict = false;
  int64_t memory_budget_bytes = 0;
  // How the budget was met: matched tensors split into `chunks`, each fetched by one run of each
  // side per sample; `runs` counts every model run per-node validation made (local-error runs of
  // the source and one-node runs included).
  int chunks = 0;
  int runs = 0;
  int64_t largest_chunk_bytes = 0;  // estimated, both sides
  // The benign change the per-tensor noise floors were measured under ("ONNX Runtime graph
  // optimization disabled (the gate's: extended), 1 thread"); empty when uncalibrated.
  std::string calibration;
  std::vector<NodeCheck> nodes;  // target topological order
  std::vector<std::string> unmatched_target;
  std::vector<std::string> unmatched_source;
  // An OpenVINO IR target: source tensors whose producing node OpenVINO fused into a layer, so
  // the IR holds no tensor with their value (or holds their name on a layer that computes more):
  // reason "fused into 'BN_bn' (Add)". Never judged; not counted as unmatched.
  std::vector<UnmatchedValue> not_comparable;
  PerNodeSummary summary;
  int first_divergent = -1;  // index into nodes: first failed (or errored) tensor
  // The first node, in topological order, whose own (local) error fails the tolerance: the node
  // that broke the model, not merely the first one downstream of it. -1 when none does.
  int culprit = -1;
  // Why no culprit could be determined, when no local test ran although --local-error asked for
  // one ("no local test against an OpenVINO IR"); then culprit is -1 without meaning that no node
  // fails by itself.
  std::string culprit_not_determined;
  // The target quantizes and the source does not (an int8 conversion): by_added_error ranks
  // nodes by the SNR of their own error (lowest first), which compares the layers' quantization
  // noise across their magnitudes; the absolute error ranks otherwise.
  bool quantized = false;
  std::vector<int> by_added_error;  // indices of nodes with a local error, largest first
  NonFiniteOrigin non_finite;
  std::vector<std::string> notes;
  // Every If/Loop/Scan node of either side, nested ones included, in expansion order.
  std::vector<SubgraphCheck> subgraphs;
  // --strict: intermediate failures, or matching no intermediate at all, fail the gate (otherwise
  // only outputs gate, as in LEAPP).
  bool gate_failed = false;
};

}  // namespace convgate::gate
