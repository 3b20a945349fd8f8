// Calibration: the noise floor of each source output (compare/noise_floor.h), measured by running
// the source once more under a benign change and comparing it with its own outputs. `compare
// --calibrate` opts in, `verify` does it unless --no-calibrate. Floors are cached by the source's
// sha256, the inputs' digest and the change, so a repeated gate pays nothing.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/backends/registry.h"
#include "convgate/compare/noise_floor.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/session/side.h"

namespace convgate::gate::internal {

// A change to the source's load options that a faithful implementation could make: ONNX Runtime
// with its graph optimizations off (on, when the gate runs with them off) and one thread (two,
// when the gate runs with one). nullopt when the backend has no such knob (exec, outputs, hf).
struct BenignVariant {
  backends::LoadOptions options;
  // "ONNX Runtime optimization disabled vs extended, 1 thread vs 2"
  std::string description;
};
std::optional<BenignVariant> BenignVariantFor(const std::string& backend,
                                              const backends::LoadOptions& gate);

// The floors of one source on the samples given, and where they came from.
struct Calibration {
  std::map<std::string, compare::NoiseFloor> floors;  // floating outputs only
  std::string basis;                                  // BenignVariant::description
  bool cache_hit = false;
  double seconds = 0.0;  // the variant's load and runs (0 on a cache hit)
};

// The cache entry's name: the source's sha256, the digest of `samples` (every input's name,
// dtype, shape and bytes), the variant and the gate's own load options.
std::string CalibrationKey(const std::string& source_sha256, const std::vector<TensorMap>& samples,
                           const BenignVariant& variant);

// Reads a cached calibration from `root`/calibration (empty root: convert::DefaultCacheDir());
// nullopt on a miss or an unreadable entry (recomputed then).
std::optional<Calibration> ReadCachedCalibration(const std::filesystem::path& root,
                                                 const std::string& key);
// Best effort: a cache that cannot be written costs the next run a calibration, nothing else.
void WriteCachedCalibration(const std::filesystem::path& root, const std::string& key,
                            const Calibration& calibration);

// Loads the source under `variant` and runs `samples[i]` for every i < source_outputs.size(),
// each output's floor being the largest difference from source_outputs[i]. Errors name the
// variant ("the source under ONNX Runtime optimization disabled: ...").
Result<Calibration> MeasureNoiseFloors(const session::ResolvedSide& source,
                                       backends::BackendFactory& factory,
                                       const BenignVariant& variant,
                                       const std::vector<TensorMap>& samples,
                                       const std::vector<TensorMap>& source_outputs);

}  // namespace convgate::gate::internal
