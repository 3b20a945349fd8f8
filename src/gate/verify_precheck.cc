#include "gate/verify_precheck.h"

#include "convgate/core/join.h"
#include "convgate/session/data_inputs.h"
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
  SideRecord record;
  record.role = "source";
  session::Side side;
  side.record = &record;
  session::SideRequest request;
  request.spec = options.source;
  request.backend = options.source_backend;
  request.factory = options.backend_factory;
  request.load = session::SideLoadOptions(options.data, options.source_exec);
  request.hash = false;  // the backend decides how inputs are made
  request.needs_model = "not a model: verify converts a model (compare takes saved outputs)";
  request.context = "source";
  if (auto e = session::OpenSide(request, side)) return e;
  const std::optional<session::LoadedModel>& model = side.model;
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
  facts.dataset = session::PrepareSideDataset(data, record, facts.signature, std::nullopt, held,
                                              dataset_record, error);
  return error;
}

}  // namespace convgate::gate::internal
