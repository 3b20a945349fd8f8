#include "output_saver.h"

#include "convgate/inputs/dataset.h"

namespace convgate::gate::internal {

void OutputSaver::Keep(const TensorMap& outputs) {
  if (active()) samples_.push_back(outputs.Clone());
}

std::optional<GateError> OutputSaver::Write(const std::vector<TensorInfo>& outputs,
                                            SideRecord& side) {
  if (!active() || samples_.empty()) return std::nullopt;
  inputs::Dataset dataset;
  dataset.origin = side.role + " outputs";
  dataset.samples = std::move(samples_);
  // SaveDataset orders test-case files by the signature's inputs: here, the outputs.
  Signature order;
  order.inputs = outputs;
  if (order.inputs.empty()) {
    for (const auto& entry : dataset.samples.front()) {
      TensorInfo info;
      info.name = entry.name;
      info.dtype = entry.tensor.dtype();
      order.inputs.push_back(std::move(info));
    }
  }
  Status saved = inputs::SaveDataset(*path_, dataset, order);
  if (!saved.ok()) return GateError{Stage::kWrite, saved.WithContext("--save-outputs")};
  side.outputs_saved_to = path_->string();
  return std::nullopt;
}

}  // namespace convgate::gate::internal
