// `convgate run`: the end-to-end sanity gate on one model.
#include <chrono>

#include "convgate/gate/workflows.h"
#include "convgate/session/data_inputs.h"
#include "convgate/session/sample_saver.h"
#include "convgate/session/sanity.h"
#include "convgate/session/save_paths.h"
#include "convgate/session/side.h"

namespace convgate::gate {
namespace {

RunReport Errored(RunReport report, Stage stage, Status status) {
  report.error = GateError{stage, std::move(status)};
  report.verdict = Verdict::kError;
  return report;
}

void CheckSample(int sample_idx, const Signature& signature, const TensorMap& sample,
                 const TensorMap& outputs, RunReport& report) {
  session::SymbolBindings bindings;
  bindings.BindInputs(signature, sample);
  const bool inputs_finite = session::AllInputsFinite(sample);
  for (const TensorInfo& declared : signature.outputs) {
    const Tensor* tensor = outputs.Find(declared.name);
    if (tensor == nullptr) {
      SanityCheck missing;
      missing.sample = sample_idx;
      missing.output = declared.name;
      missing.declared_dtype = declared.type_name;
      missing.declared_shape = FormatDims(declared);
      missing.passed = false;
      missing.failures.push_back("missing: the runtime returned no output '" + declared.name + "'");
      report.checks.push_back(std::move(missing));
      continue;
    }
    report.checks.push_back(session::CheckOutputSanity(sample_idx, declared.name, *tensor,
                                                       &declared, inputs_finite, bindings));
  }
  for (const auto& entry : outputs) {
    if (signature.FindOutput(entry.name) != nullptr) continue;
    // A model that declares no outputs (TorchScript) has no dtype or shape to hold them to: an
    // output declaring neither is checked for non-empty and finite only.
    const TensorInfo anything{entry.name, std::nullopt, "", false, {}, {}};
    const TensorInfo* declared = signature.positional_outputs ? &anything : nullptr;
    SanityCheck check = session::CheckOutputSanity(sample_idx, entry.name, entry.tensor, declared,
                                                   inputs_finite, bindings);
    if (declared != nullptr) check.declared_shape.clear();  // not "(no shape)": nothing declared
    report.checks.push_back(std::move(check));
  }
  if (sample_idx == 0) report.bindings = bindings.Describe();
}

}  // namespace

RunReport RunModelGate(const RunOptions& options) {
  RunReport report;
  report.model.role = "model";
  report.model.path = options.model.string();
  if (auto e = session::CheckSavePaths(options.data, {{"the model", options.model}})) {
    return Errored(std::move(report), e->stage, e->status);
  }
  session::Side side;
  side.record = &report.model;
  session::SideRequest request;
  request.spec = options.model.string();
  request.backend = options.backend;
  request.factory = options.backend_factory;
  request.load = session::SideLoadOptions(options.data, options.exec);
  request.needs_model = "not a model: `convgate run` needs a model file (e.g. .onnx)";
  if (auto e = session::OpenSide(request, side)) {
    return Errored(std::move(report), e->stage, e->status);
  }
  const session::LoadedModel* loaded = &*side.model;
  backends::Model& model = *loaded->model;
  if (model.signature().positional_outputs) {
    report.model.notes.push_back(
        "the model declares no outputs (TorchScript records none): each output is checked for "
        "being non-empty and finite only, not for a dtype or shape");
  }

  std::optional<GateError> error;
  // --save-outputs keeps every sample's outputs until they are written.
  const session::HeldOutputs held{
      .models = {
          {&model.signature(), session::SampleSaver::HoldsEverySample(options.data.save_outputs)}}};
  // The given samples stay the caller's.
  std::optional<inputs::Dataset> given;
  if (options.inputs) {
    given = options.inputs->Clone();
    // A comparison's float32 samples, for a model that takes float16 (verify --to fp16 without
    // keep-IO-types): cast as the target's binding casts them.
    if (Status cast = session::CastToDeclared(*given, model.signature(), report.model.notes);
        !cast.ok()) {
      return Errored(std::move(report), Stage::kInputs, cast);
    }
  }
  // Generated and --data samples are made one at a time, and saved (--save-inputs) as they are.
  session::DataOptions data = options.data;
  data.stream = true;
  std::optional<inputs::Dataset> dataset = session::PrepareSideDataset(
      data, report.model, model.signature(), std::move(given), held, report.inputs, error);
  if (!dataset.has_value()) return Errored(std::move(report), error->stage, error->status);

  session::SampleSaver saver(session::SampleSaver::What::kOutputs, options.data.save_outputs);
  session::SampleSaver inputs_saver(session::SampleSaver::What::kInputs,
                                    dataset->is_streamed() ? data.save_inputs : std::nullopt);
  TensorMap made;  // a streamed data set's current sample
  for (size_t sample_idx = 0; sample_idx < dataset->size(); ++sample_idx) {
    if (sample_idx >= dataset->samples.size()) {
      made = TensorMap();
      std::vector<inputs::DataFile> read;
      Result<TensorMap> next = dataset->make(sample_idx, read);
      report.inputs.files.insert(report.inputs.files.end(), read.begin(), read.end());
      if (!next.ok()) {
        return Errored(std::move(report), Stage::kInputs,
                       next.status().WithContext("sample " + std::to_string(sample_idx)));
      }
      made = std::move(next).value();
    }
    const TensorMap& sample =
        sample_idx < dataset->samples.size() ? dataset->samples[sample_idx] : made;
    if (Status saved = inputs_saver.Keep(sample, dataset->size(), model.signature().inputs);
        !saved.ok()) {
      return Errored(std::move(report), Stage::kWrite, saved);
    }
    const auto start = std::chrono::steady_clock::now();
    Result<TensorMap> outputs = model.Run(sample, {});
    report.model.run_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    session::RecordBackendLog(*loaded, report.model);
    if (!outputs.ok()) {
      return Errored(std::move(report), Stage::kRun,
                     outputs.status().WithContext("sample " + std::to_string(sample_idx)));
    }
    CheckSample(static_cast<int>(sample_idx), model.signature(), sample, *outputs, report);
    if (report.model.output_names.empty()) report.model.output_names = outputs->Names();
    (void)saver.Keep(*outputs, dataset->size(), model.signature().outputs);  // told by Finish
  }
  if (auto e = inputs_saver.Finish(report.inputs.saved_to)) {
    return Errored(std::move(report), e->stage, e->status);
  }
  if (auto e = saver.Finish(report.model.outputs_saved_to)) {
    return Errored(std::move(report), e->stage, e->status);
  }
  if (report.checks.empty()) {
    // A run that checked nothing proves nothing (an exec runner writing an empty outputs.npz).
    report.structure_failures.push_back(
        "nothing was checked: the model declares no outputs and returned none");
  }
  report.verdict = report.structure_failures.empty() ? Verdict::kPass : Verdict::kFail;
  for (const SanityCheck& check : report.checks) {
    if (!check.passed) report.verdict = Verdict::kFail;
  }
  return report;
}

}  // namespace convgate::gate
