// What the gate workflows produce: plain values that the report module renders. Every verdict in
// a report can be explained from these fields alone (which output, which sample, which element,
// by how much, under which policy). A side's, a data set's and a sanity check's records, and the
// stage an error stopped at, are the session's (session/records.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/bench/records.h"
#include "convgate/compare/agreement.h"
#include "convgate/compare/policy.h"
#include "convgate/compare/tensor_compare.h"
#include "convgate/core/exit_code.h"
#include "convgate/core/status.h"
#include "convgate/core/verdict.h"
#include "convgate/gate/per_node_results.h"
#include "convgate/session/records.h"

namespace convgate::gate {

// The session's records, which every report here is made of.
using session::DatasetRecord;
using session::ExitCodeFor;
using session::GateError;
using session::InputRecord;
using session::SanityCheck;
using session::SideRecord;
using session::Stage;
using session::StageName;

// The verdict (core/verdict.h) as gate's workflows decide it.
using ::convgate::Verdict;
using ::convgate::VerdictName;

// The exit code of a whole workflow: the error's if there is one, else 0 for a pass and 1 for a
// failure.
ExitCode ExitCodeFor(Verdict verdict, const std::optional<GateError>& error);

struct RunReport {
  SideRecord model;
  DatasetRecord inputs;
  // "batch=1 (from input 'image' dim 0)", per sample 0; the symbolic dims the check bound.
  std::vector<std::string> bindings;
  std::vector<SanityCheck> checks;
  // Failures of the run as a whole; each one fails the gate ("nothing was checked: ...").
  std::vector<std::string> structure_failures;
  Verdict verdict = Verdict::kError;
  std::optional<GateError> error;
};

// `convgate compare`: one output of one sample.
struct OutputCheck {
  int sample = 0;
  std::string output;
  compare::Tolerance tolerance;  // policy.tolerance()
  // The policy this check was judged under, resolved for this output (compare/policy.h).
  compare::OutputPolicy policy;
  std::optional<compare::TensorComparison> comparison;  // absent when a side lacks the output
  bool passed = false;
  std::vector<std::string> failures;
  // Observations that do not fail the check (mismatches within mismatch_ppm, shared NaN, ...).
  std::vector<std::string> notes;
  std::vector<std::string> hints;  // what to try next
  // How the verdict was reached (compare/judge.h): false when a value came from the error
  // histograms (`convgate check` under a new policy); indeterminate when they could not decide,
  // which fails the check.
  bool verdict_exact = true;
  bool indeterminate = false;
  // Elements outside the judged tolerance (compare::Judgement::mismatches).
  compare::Bracket<int64_t> mismatches;
  // compare::Judgement::floors_undefined and floor_multiple: cosine and SNR undefined for a
  // source within atol of zero; the largest error as a multiple of the noise floor.
  std::string floors_undefined;
  std::optional<double> floor_multiple;
};

// One output over every sample: how many samples failed, where first, and the worst statistics
// (LEAPP labels samples "sample 0", "sample 1", ...; so does convgate).
struct OutputAggregate {
  std::string output;
  int samples = 0;
  int failed_samples = 0;
  int first_failing_sample = -1;
  int worst_sample = -1;  // the sample with the largest max |diff|
  double max_abs_error = 0.0;
  double mean_abs_error = 0.0;  // over every finite pair of every sample
  double max_rel_error = 0.0;
  int64_t mismatches = 0;
  int64_t elements = 0;
  int64_t introduced_non_finite = 0;
};

// One --agreement check, judged on the output's agreement over every sample.
struct AgreementCheckResult {
  std::string check;  // as given: "logits:top1>=0.999"
  bool passed = false;
  std::string message;  // one sentence, for pass and fail alike (compare/agreement_check.h)
};

// Classifier agreement of one output, aggregated over every sample and row (compare/agreement.h).
struct AgreementRecord {
  std::string output;
  // "named" (by --classifier or an --agreement check) or "detected" (by name, dtype and shape;
  // reported only: detection never gates).
  std::string selected_by;
  compare::AgreementStats stats;
  // Why agreement could not be counted ("sample 2: class scores need the same shape ..."); empty
  // when it was. Every check on such an output fails.
  std::string error;
  std::vector<AgreementCheckResult> checks;
};

// How the noise floors in a report's policy were found (compare --calibrate).
struct CalibrationRecord {
  // "measured", "cached" (an earlier run's floors on the same model and inputs), or "skipped"
  // with the reason in `detail`.
  std::string status;
  std::string basis;   // the benign change: "ONNX Runtime optimization disabled vs extended, ..."
  std::string detail;  // why skipped, or what failed
  int samples = 0;     // samples the floors were measured on
  double seconds = 0.0;
  double factor = 0.0;  // compare::kNoiseFloorFactor
};

struct CompareReport {
  SideRecord source;
  SideRecord target;
  DatasetRecord inputs;  // empty origin when both sides are saved outputs
  compare::Policy policy;
  // Output count and name mismatches, a comparison that compared nothing (neither side has an
  // output), and with --min-coverage an output the inputs did not exercise; each fails the gate.
  std::vector<std::string> structure_failures;
  std::vector<OutputCheck> checks;
  std::vector<OutputAggregate> aggregates;  // one per output, in first-seen order
  std::vector<AgreementRecord> agreements;  // classifier outputs, in first-seen order
  // Set by `convgate check`: the saved report these checks were re-judged from.
  std::string rejudged_from;
  // compare --per-node: intermediate tensors (per_node_results.h).
  std::optional<PerNodeReport> per_node;
  // compare --calibrate: how the policy's noise floors were found.
  std::optional<CalibrationRecord> calibration;
  // Observations about the inputs that do not fail the gate: a source output constant on every
  // sample, or saturated (the inputs may not exercise the model; gate/input_coverage.h).
  std::vector<std::string> warnings;
  // compare/verify --benchmark: both models timed on the comparison's inputs after it, and the
  // speed gates (--min-speedup, --max-slowdown), whose failure fails the gate.
  std::optional<bench::BenchmarkRecord> benchmark;
  Verdict verdict = Verdict::kError;
  std::optional<GateError> error;

  // The first failing check in (sample, output) order, or null.
  const OutputCheck* FirstFailure() const;
  // The first failing --agreement check, or null.
  const AgreementCheckResult* FirstAgreementFailure() const;
};

}  // namespace convgate::gate
