// One comparison's judging, sample by sample: every output checked under the policy (the
// structure on the first sample), classifier agreement and input coverage counted; then the
// verdict. `compare` (a pair of models) and compare_arrays (held outputs) judge through it, so
// the workflow files keep only their steps.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "convgate/compare/agreement_check.h"
#include "convgate/core/tensor.h"
#include "convgate/gate/results.h"
#include "convgate/session/side_pair.h"
#include "gate/compare_agreement.h"
#include "gate/input_coverage.h"

namespace convgate::gate::internal {

// What the source outputs the inputs never exercised become (input_coverage.h).
enum class CoverageRule {
  kNotTracked,  // held outputs: no inputs to blame
  kWarn,        // the default
  kGate,        // --min-coverage
};

class SampleJudge {
 public:
  // Judges into `report` (which must outlive the judge), its policy and side records as set.
  SampleJudge(const compare::AgreementConfig& agreement, CoverageRule coverage,
              CompareReport& report);

  // A tolerance, --classifier or --agreement naming an output neither side has is a typo that
  // would silently never apply: a usage error, found from the side records before anything runs.
  std::optional<GateError> CheckNames() const;

  // One sample's outputs of both sides; `mismatch` is a structure failure found pairing them.
  void Judge(int sample, const TensorMap& source, const TensorMap& target,
             std::optional<std::string> mismatch = std::nullopt);

  // The pair's sink (session::SidePair::RunSamples, given as std::ref): each sample judged as
  // it arrives.
  std::optional<GateError> operator()(session::SidePair::SampleOutputs& outputs) {
    Judge(outputs.sample, outputs.source, outputs.target, std::move(outputs.mismatch));
    return std::nullopt;
  }

  // The verdict once every sample (and a per-node run) is in: a comparison of nothing fails,
  // coverage findings are added, the checks are finished and agreement judged.
  void Conclude(size_t samples);

 private:
  void ReportCoverage();

  CompareReport& report_;
  AgreementTracker agreements_;
  CoverageTracker coverage_;
  CoverageRule coverage_rule_;
};

}  // namespace convgate::gate::internal
