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
#include "convgate/session/side_pair.h"

namespace convgate::gate::internal {

// Runs the source ahead of the target (session/side_pair.h) and, when calibration is asked for,
// records why it is skipped, applies cached floors, or measures them under a benign variant
// against those outputs. The floors go into report.policy before anything is judged; they only
// change tolerances nobody set. The source's session is let go first, so at most two sessions
// are ever held. A variant that cannot load or run leaves the policy uncalibrated, saying why:
// the gate's own verdict does not depend on it.
void RunAheadAndCalibrate(const CompareOptions& options, session::SidePair& pair,
                          CompareReport& report);

}  // namespace convgate::gate::internal
