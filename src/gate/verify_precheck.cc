#include "gate/verify_precheck.h"

#include "convgate/core/join.h"
#include "convgate/session/data_inputs.h"
#include "convgate/session/hf_inputs.h"
#include "convgate/session/positional.h"
#include "convgate/session/side.h"

namespace convgate::gate::internal {
namespace {

// Per-output tolerances and agreement checks must name outputs the source declares (a model
// naming its outputs by position, TorchScript, declares none: the target decides them later).
std::optional<GateError> CheckOutputNames(const CompareOptions& options,
                                          const Signature& signature) {
  if (signature.positional_outputs) return std::nullopt;
  std::vector<std::string> outputs;
  for (const TensorInfo& info : signature.outputs) outputs.push_back(info.name);
  std::vector<std::string> named = options.policy.NamedOutputs();
  const std::vector<std::string> classifiers = options.agreement.NamedOutputs();
  named.insert(named.end(), classifiers.begin(), classifiers.end());
  for (const std::string& name : named) {
    if (std::find(outputs.begin(), outputs.end(), name) != outputs.end()) continue;
    return GateError{Stage::kFlags, Status::InvalidArgument(
                                        "a tolerance or agreement check names output '" + name +
                                        "', which the source does not have (its "
                                        "outputs: " +
                                        JoinComma(outputs, "none") + ")")};
  }
  return std::nullopt;
}

// A TorchScript source declares input names but no shapes: inputs can be made only when every
// input has a --shape (or they are loaded).
bool CanPrepareInputs(const DataOptions& data, const Signature& signature) {
  if (data.inputs_given() || !session::HasUntypedInputs(signature)) return true;
  return session::CheckShapesGiven(signature, data.generate).ok();
}

}  // namespace

std::optional<GateError> PrecheckSource(const CompareOptions& options, SourceFacts& facts) {
  Result<session::ResolvedSide> side = session::ResolveSide(options.source, options.source_backend);
  if (!side.ok()) {
    const Stage stage =
        side.status().code() == StatusCode::kNotFound ? Stage::kLoad : Stage::kFlags;
    return GateError{stage, side.status().WithContext("source")};
  }
  if (side->kind != session::SideKind::kModel) {
    return GateError{Stage::kFlags, Status::InvalidArgument(
                                        "verify converts a model, but SOURCE " + options.source +
                                        " holds saved outputs: use compare for those")};
  }
  SideRecord record;
  record.role = "source";
  session::DescribeSide(*side, record, /*hash=*/false);  // the backend decides how inputs are made
  Result<session::LoadedModel> model =
      session::LoadModel(*side, *options.backend_factory,
                         session::SideLoadOptions(options.data, options.source_exec), record);
  if (!model.ok()) return GateError{Stage::kLoad, model.status().WithContext("source")};
  facts.signature = model->model->signature();
  if (auto error = CheckOutputNames(options, facts.signature)) return error;
  if (!CanPrepareInputs(options.data, facts.signature)) {
    Status names = inputs::CheckInputNames(facts.signature, options.data.generate);
    if (!names.ok()) return GateError{Stage::kFlags, names};
    return std::nullopt;
  }
  // The comparison saves the inputs and outputs; this rehearsal only prepares them.
  DataOptions data = options.data;
  data.save_inputs.reset();
  data.save_outputs.reset();
  data.stream = true;  // the end-to-end run takes the samples one at a time
  DatasetRecord dataset_record;
  std::optional<GateError> error;
  // The target is not converted yet: the source's outputs are what is known to be held.
  const session::HeldOutputs held{.models = {{&facts.signature, false}}};
  Result<std::optional<inputs::Dataset>> made = session::HfModelInputs(record, data);
  if (!made.ok()) {
    const Stage stage =
        made.status().code() == StatusCode::kInvalidArgument ? Stage::kFlags : Stage::kInputs;
    return GateError{stage, made.status()};
  }
  facts.dataset = session::PrepareDataset(session::ForModel(data, record.path), facts.signature,
                                          std::move(*made), held, dataset_record, error);
  return error;
}

}  // namespace convgate::gate::internal
