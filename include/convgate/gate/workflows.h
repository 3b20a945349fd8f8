// The verification workflows behind `convgate run` and `convgate compare`. They never throw and
// always return a report: a failed or errored gate still produces every result file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "convgate/backends/registry.h"
#include "convgate/compare/agreement_check.h"
#include "convgate/compare/policy.h"
#include "convgate/core/limits.h"
#include "convgate/gate/bench.h"
#include "convgate/gate/per_node.h"
#include "convgate/gate/results.h"
#include "convgate/inputs/dataset.h"
#include "convgate/inputs/input_options.h"
#include "convgate/session/options.h"
#include "convgate/session/side_pair.h"

namespace convgate::gate {

// What a model runs on and within (session/options.h).
using session::DataOptions;
using session::ExecOptions;

struct RunOptions {
  std::filesystem::path model;
  std::string backend;  // empty: from the model's format
  DataOptions data;
  ExecOptions exec;
  // Samples already made, used instead of generating (not instead of --load-inputs): verify's run
  // of the target takes the comparison's inputs, which a target that names no dims (an OpenVINO
  // IR) could not regenerate from --dim.
  std::optional<inputs::Dataset> inputs;
  // Where the model's backend comes from (LevelDB's Options::env): the backends of this build,
  // or a fake in tests. Not owned; must outlive the call.
  backends::BackendFactory* backend_factory = backends::BackendFactory::Default();
};

// Loads and runs the model on every sample, then checks each output: non-empty, no NaN/Inf,
// the declared dtype, and a shape consistent with the declared one (symbolic dims bound
// consistently across inputs and outputs).
RunReport RunModelGate(const RunOptions& options);

// The two sides, their backends, exec commands and data set, and where backends come from, are
// the session's PairSpec (session/side_pair.h): a comparison runs them as a SidePair.
struct CompareOptions : session::PairSpec {
  compare::Policy policy;
  // --classifier, --agreement, --flip-margin, --top-k: which outputs are classifier outputs and
  // the agreement checks that gate on them (compare/agreement_check.h).
  compare::AgreementConfig agreement;
  // --per-node, --strict, --memory-budget, --local-error (gate/per_node.h). Needs two models.
  PerNodeOptions per_node;
  // --calibrate / --no-calibrate (compare/noise_floor.h): run the source once more under a benign
  // change and raise every default atol to kNoiseFloorFactor x the measured floor. `compare` opts
  // in, `verify` opts out; floors are cached under cache_dir/calibration (empty: the default cache
  // directory, CONVGATE_CACHE_DIR) unless use_cache is false.
  struct Calibration {
    bool enabled = false;
    bool use_cache = true;
    std::filesystem::path cache_dir;
  } calibration;
  // --min-coverage: a source output the inputs did not exercise (constant on every sample, or
  // saturated at 0/1; gate/input_coverage.h) fails the gate instead of warning.
  bool min_coverage = false;
  // --benchmark (benchmark.enabled): after the comparison, both models are timed on its inputs
  // (gate/bench.h), and a speed gate that fails fails the comparison. Needs two models.
  BenchmarkOptions benchmark;
};

// Runs (or loads) both sides on the same samples and compares every output under the policy.
CompareReport CompareModelsGate(const CompareOptions& options);

// Outputs a caller already holds (the Python API's compare_arrays), judged as `compare` judges a
// model's: every output of every sample under the policy, classifier agreement counted, the
// verdict concluded. No model runs and nothing is read or written.
struct HeldOutputsOptions {
  compare::Policy policy;
  compare::AgreementConfig agreement;
  // What the report calls each side ("expected", "actual").
  std::string source_name = "expected";
  std::string target_name = "actual";
};
// `source` and `target` hold one TensorMap per sample; a count that differs is a structure
// failure. The tensors may view the caller's memory (Tensor::Adopt): nothing is copied.
CompareReport CompareHeldOutputs(const HeldOutputsOptions& options,
                                 const std::vector<TensorMap>& source,
                                 const std::vector<TensorMap>& target);

}  // namespace convgate::gate
