#include "gate/compare_per_node.h"

#include <string>
#include <utility>

#include "gate/per_node/run.h"
#include "gate/per_node/subgraphs.h"

namespace convgate::gate::internal {
namespace {

std::optional<GateError> CheckPerNodeSides(const session::Side& source,
                                           const session::Side& target) {
  for (const session::Side* side : {&source, &target}) {
    if (!side->model) {
      return GateError{Stage::kFlags, Status::InvalidArgument(
                                          "--per-node needs two models: the " + side->record->role +
                                          " " + side->record->path + " holds saved outputs")};
    }
    if (!side->model->backend->SupportsIntermediates()) {
      return GateError{Stage::kFlags,
                       Status::InvalidArgument("--per-node: the " + side->record->role +
                                               " backend '" + side->model->backend->name() +
                                               "' cannot expose intermediate tensors")};
    }
  }
  return std::nullopt;
}

// A calibrated comparison calibrates its intermediates too (per_node.h).
PerNodeOptions PerNodeOptionsOf(const CompareOptions& options) {
  PerNodeOptions per_node = options.per_node;
  per_node.calibrate = per_node.calibrate || options.calibration.enabled;
  return per_node;
}

PerNodeSide SideOf(session::Side& side) {
  return PerNodeSide{side.model->backend.get(), side.model->model.get(), side.resolved.path,
                     side.record->role};
}

}  // namespace

std::optional<GateError> CheckPerNodeStage(const CompareOptions& options,
                                           const session::SidePair& pair) {
  if (!options.per_node.enabled) return std::nullopt;
  if (auto e = CheckPerNodeSides(pair.source(), pair.target())) return e;
  // The same named inputs on both, at most cast (a float16 or bfloat16 input: RunPerNodeStage
  // casts the samples for the target); a target that takes them renamed or transposed (--map,
  // ':0', position, --target-layout) is not supported there yet.
  if (pair.target_takes_inputs_as_they_are() || pair.binding()->names_kept()) return std::nullopt;
  return GateError{Stage::kFlags,
                   Status::InvalidArgument(
                       "--per-node needs a target that takes the source's inputs under their own "
                       "names; this one takes them renamed or transposed (see the target's "
                       "notes): compare its outputs without --per-node")};
}

std::optional<GateError> RunPerNodeStage(const CompareOptions& options, session::SidePair& pair,
                                         CompareReport& report) {
  if (!options.per_node.enabled || !pair.dataset().has_value()) return std::nullopt;
  const std::vector<TensorMap>& samples = pair.dataset()->samples;
  // A target taking its inputs cast (CheckPerNodeStage) is fed them cast, as the comparison fed it.
  std::vector<TensorMap> cast;
  if (!pair.target_takes_inputs_as_they_are()) {
    for (const TensorMap& sample : samples) {
      Result<TensorMap> taken = pair.binding()->TargetInputs(sample);
      if (!taken.ok()) return GateError{Stage::kRun, taken.status().WithContext("--per-node")};
      cast.push_back(std::move(taken).value());
    }
  }
  PerNodeSide target = SideOf(pair.target());
  if (!cast.empty()) target.inputs = &cast;
  Result<PerNodeReport> per_node = RunPerNodeWithSubgraphs(
      SideOf(pair.source()), session::SideLoadOptions(options.data, options.source_exec), target,
      session::SideLoadOptions(options.data, options.target_exec), samples, report.policy,
      PerNodeOptionsOf(options));
  if (!per_node.ok()) return GateError{Stage::kRun, per_node.status().WithContext("--per-node")};
  report.per_node = std::move(per_node).value();
  return std::nullopt;
}

}  // namespace convgate::gate::internal
