// The comparison's calibration step (gate/calibrate.h) and its record, in the order `compare`
// takes them: decided before the source runs (skipped, or the cached floors applied), measured
// once the source has run ahead on the first samples, then applied to the policy every later
// judgement reads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "convgate/core/tensor.h"
#include "convgate/gate/results.h"
#include "convgate/gate/workflows.h"
#include "gate/calibrate.h"

namespace convgate::gate::internal {

// What is left to do once StartCalibration has decided.
struct CalibrationStep {
  std::optional<BenignVariant> variant;  // set when the floors still have to be measured
  std::string key;                       // the cache entry (CalibrationKey)
};

// Records in report.calibration why calibration is skipped (not asked for, no model source, a
// backend without a benign change), or applies cached floors; otherwise returns the variant to
// measure under. `source_sha256` is the source file's.
CalibrationStep StartCalibration(const CompareOptions& options, const session::ResolvedSide& source,
                                 const std::optional<inputs::Dataset>& dataset,
                                 const std::string& source_sha256, CompareReport& report);

// Measures under step.variant against the source's outputs of the first samples, applies the
// floors to report.policy and caches them. A variant that cannot load or run leaves the policy
// uncalibrated, saying why: the gate's own verdict does not depend on it.
void FinishCalibration(const CalibrationStep& step, const CompareOptions& options,
                       const session::ResolvedSide& source, const inputs::Dataset& dataset,
                       const std::vector<TensorMap>& source_outputs, CompareReport& report);

}  // namespace convgate::gate::internal
