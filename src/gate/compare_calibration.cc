#include "gate/compare_calibration.h"

#include <algorithm>
#include <map>

#include "convgate/compare/noise_floor.h"
#include "convgate/core/numbers.h"
#include "gate/calibrate.h"

namespace convgate::gate::internal {
namespace {

void Skip(CompareReport& report, std::string detail) {
  report.calibration->status = "skipped";
  report.calibration->detail = std::move(detail);
}

void Apply(const Calibration& calibration, CompareReport& report) {
  report.policy.noise_floors = calibration.floors;
  report.policy.noise_floor_basis = calibration.basis;
  CalibrationRecord& record = *report.calibration;
  record.status = calibration.cache_hit ? "cached" : "measured";
  record.basis = calibration.basis;
  record.seconds = calibration.seconds;
  for (const auto& [name, floor] : calibration.floors) {
    record.samples = std::max(record.samples, floor.samples);
  }
}

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
                                 const std::string& source_sha256, CompareReport& report) {
  CalibrationStep step;
  if (!options.calibration.enabled) return step;
  report.calibration.emplace();
  report.calibration->factor = compare::kNoiseFloorFactor;
  if (source.kind != session::SideKind::kModel) {
    Skip(report, "the source is saved outputs: there is nothing to run again");
    return step;
  }
  if (!dataset.has_value() || dataset->samples.empty()) {
    Skip(report, "no samples to run the source on");
    return step;
  }
  std::optional<BenignVariant> variant =
      BenignVariantFor(source.backend, session::SideLoadOptions(options.data, options.source_exec));
  if (!variant) {
    Skip(report, "the '" + source.backend +
                     "' backend has no benign change to measure against (ONNX Runtime and "
                     "libtorch sources do)");
    return step;
  }
  report.calibration->basis = variant->description;
  if (!source_sha256.empty()) {
    step.key = CalibrationKey(source_sha256, dataset->samples, *variant);
    if (options.calibration.use_cache) {
      if (std::optional<Calibration> cached =
              ReadCachedCalibration(options.calibration.cache_dir, step.key)) {
        Apply(*cached, report);
        return step;
      }
    }
  }
  step.variant = std::move(variant);
  return step;
}

// Measures under step.variant against the source's outputs of the first samples, applies the
// floors to report.policy and caches them.
void FinishCalibration(const CalibrationStep& step, const CompareOptions& options,
                       const session::ResolvedSide& source, const inputs::Dataset& dataset,
                       const std::vector<TensorMap>& source_outputs, CompareReport& report) {
  if (!step.variant) return;
  if (source_outputs.empty()) {
    Skip(report, "the source did not run");
    return;
  }
  Result<Calibration> measured = MeasureNoiseFloors(source, *options.backend_factory, *step.variant,
                                                    dataset.samples, source_outputs);
  if (!measured.ok()) {
    Skip(report, measured.status().message());
    return;
  }
  Apply(*measured, report);
  if (!step.key.empty() && options.calibration.use_cache) {
    WriteCachedCalibration(options.calibration.cache_dir, step.key, *measured);
  }
}

}  // namespace

void RunAheadAndCalibrate(const CompareOptions& options, session::SidePair& pair,
                          CompareReport& report) {
  const CalibrationStep calibration =
      options.calibration.enabled ? StartCalibration(options, pair.source().resolved,
                                                     pair.dataset(), pair.SourceSha256(), report)
                                  : CalibrationStep{};
  const std::vector<TensorMap>& ahead = pair.RunSourceAhead(calibration.variant.has_value());
  if (calibration.variant && !pair.ahead_failed() && pair.dataset().has_value()) {
    FinishCalibration(calibration, options, pair.source().resolved, *pair.dataset(), ahead, report);
    session::ReleaseFreedMemory();
  }
}

}  // namespace convgate::gate::internal
