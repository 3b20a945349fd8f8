#include "convgate/session/output_saver.h"

#include "convgate/inputs/dataset.h"

namespace convgate::session {

void OutputSaver::Keep(const TensorMap& outputs) {
  if (active()) samples_.push_back(outputs.Clone());
}

std::optional<GateError> OutputSaver::Write(const std::vector<TensorInfo>& outputs,
                                            SideRecord& side) {
  if (!active() || samples_.empty()) return std::nullopt;
  inputs::Dataset dataset;
  dataset.origin = side.role + " outputs";
  dataset.samples = std::move(samples_);
  // Test-case files follow the declared order; a side declaring no outputs keeps the run's order.
  Status saved = inputs::SaveOutputs(*path_, dataset, outputs);
  if (!saved.ok()) return GateError{Stage::kWrite, saved.WithContext("--save-outputs")};
  side.outputs_saved_to = path_->string();
  return std::nullopt;
}

}  // namespace convgate::session
