// `convgate verify`: convert, run the sanity gate on the target, compare with the source.
#include <chrono>

#include "convgate/backends/hf_inputs.h"
#include "convgate/compare/agreement_check.h"
#include "convgate/core/file_util.h"
#include "convgate/core/numbers.h"
#include "convgate/core/temp_dir.h"
#include "convgate/gate/pair_policy.h"
#include "convgate/gate/verify.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/inputs/dataset.h"
#include "convgate/session/loaded_models.h"
#include "convgate/session/save_paths.h"
#include "gate/verify_path.h"
#include "gate/verify_precheck.h"

namespace convgate::gate {
namespace {

VerifyReport Errored(VerifyReport report, Stage stage, Status status) {
  report.error = GateError{stage, std::move(status)};
  report.verdict = Verdict::kError;
  return report;
}

// "fp16: convgate fp16 1 (cache hit)", "onnx: torch.onnx.export via runtime/torch_export.py
// (torch 1.13.1)", "optimum-openvino: optimum-cli export openvino (openvino_export.py) optimum
// 2.1.0, ...; fallback: weight_format int4, because ...": which conversion, by which tool at which
// version, and any fallback it took.
std::string ConversionPath(const convert::ConversionRecord& record) {
  std::string path = record.kind + ": " + record.tool;
  if (!record.tool_version.empty()) path += " " + record.tool_version;
  if (record.cache_hit) path += " (cache hit)";
  // A conversion that took another path than the one asked for says so (convert.h).
  for (const std::string& note : record.notes) {
    if (note.rfind(convert::kFallbackNotePrefix, 0) == 0) path += "; " + note;
  }
  return path;
}

// The reference's conversion_path for a conversion of `kind`: the OpenVINO tool that ran
// (optimum-cli for both optimum exporters; ovc for a SavedModel, which the record's tool names),
// else the kind's name without its argument ("opset:17" -> "opset").
std::string ReferencePath(const std::string& kind, const std::string& tool) {
  if (kind == "optimum-openvino" || kind == "optimum-onnx") return "optimum-cli";
  if (kind == "openvino" || kind == "openvino:fp16" || kind == "openvino:int8") {
    return tool.rfind("ovc", 0) == 0 ? "ovc" : "convert_model";
  }
  return kind.substr(0, kind.find(':'));
}

// "2x3x128x128,1x10" for the export's input_shape parameter.
std::string ShapesText(const TensorMap& sample, bool dtypes) {
  std::string text;
  for (const auto& entry : sample) {
    if (!text.empty()) text += ",";
    if (dtypes) {
      text += DTypeName(entry.tensor.dtype());
      continue;
    }
    const std::vector<int64_t>& dims = entry.tensor.shape().dims();
    for (size_t axis = 0; axis < dims.size(); ++axis) {
      text += (axis == 0 ? "" : "x") + std::to_string(dims[axis]);
    }
  }
  return text;
}

// A TorchScript file, which the openvino kinds convert with input names and shapes.
bool IsTorchScript(const std::filesystem::path& source) {
  const std::string extension = source.extension().string();
  return extension == ".pt" || extension == ".pth" || extension == ".ts" ||
         extension == ".torchscript";
}

// PyTorch -> ONNX exports, and TorchScript -> OpenVINO IR conversions, at the shapes the
// comparison will feed (a static IR, as the ONNX export is): the inputs --shape or --load-inputs
// decided, under forward()'s argument names (the IR's inputs are named so, not x.1). A --param
// that says otherwise is a contradiction the user must resolve.
Status SetExportInputs(const internal::SourceFacts& facts, convert::ConversionRequest& request) {
  const bool torchscript_to_ir = (request.kind == "openvino" || request.kind == "openvino:fp16" ||
                                  request.kind == "openvino:int8") &&
                                 IsTorchScript(request.source);
  // A torch.export program (.pt2) carries its own input names, shapes and dynamic dims.
  const bool exported_program = request.source.extension() == ".pt2";
  if ((request.kind != "onnx" && !torchscript_to_ir) || exported_program ||
      !facts.dataset.has_value() || facts.dataset->samples.empty()) {
    return Status::OK();
  }
  const TensorMap& sample = facts.dataset->samples.front();
  const std::pair<const char*, std::string> derived[] = {
      {"input_names",
       [&] {
         std::string names;
         for (const auto& entry : sample) names += (names.empty() ? "" : ",") + entry.name;
         return names;
       }()},
      {"input_shape", ShapesText(sample, false)},
      {"input_dtype", ShapesText(sample, true)},
  };
  for (const auto& [param, value] : derived) {
    auto [found, inserted] = request.params.emplace(param, value);
    if (inserted || found->second == value) continue;
    return Status::InvalidArgument("--param " + std::string(param) + "=" + found->second +
                                   " contradicts the inputs the comparison uses (" + value +
                                   ", from --shape or --load-inputs): drop one");
  }
  return Status::OK();
}

// The target from a conversion; fills the report's conversion fields. Errors are Stage::kConvert,
// or Stage::kFlags for a bad request.
// The weight-compression profile's top-1 rule: compressed weights may move every logit, but the
// first generated token is the model's answer to the prompt and must stay the same. Added for a
// generating source (its first_step_logits) unless the user already put a check on that output.
void AddFirstStepTop1(const PairFacts& pair, const Signature& source,
                      compare::AgreementConfig& agreement) {
  constexpr char kLogits[] = "first_step_logits";
  if (CompressedWeightFormat(pair).empty() || source.FindOutput(kLogits) == nullptr) return;
  for (const compare::AgreementCheck& check : agreement.checks) {
    if (check.output == kLogits) return;
  }
  Result<compare::AgreementCheck> top1 =
      compare::ParseAgreementCheck(std::string(kLogits) + ":top1>=1");
  if (top1.ok()) agreement.checks.push_back(std::move(*top1));
}

// --to int8-static without --param calibration: the activation ranges are calibrated on the
// gate's own inputs (generated, --load-inputs or --data), every sample, written to `folder`.
Status SetCalibrationSamples(const internal::SourceFacts& facts, std::optional<TempDir>& folder,
                             convert::ConversionRequest& request) {
  const bool calibrated = request.kind == "int8-static" || request.kind == "openvino:int8";
  if (!calibrated || request.params.count("calibration") > 0) return Status::OK();
  if (!facts.dataset.has_value()) {
    return Status::InvalidArgument(
        "--to " + request.kind +
        " needs samples to calibrate on, and this source's inputs are decided by the converted "
        "model: give --param calibration=inputs.npz or --load-inputs");
  }
  inputs::Dataset samples;
  samples.origin = facts.dataset->origin;
  for (size_t index = 0; index < facts.dataset->size(); ++index) {
    if (index < facts.dataset->samples.size()) {
      samples.samples.push_back(facts.dataset->samples[index].Clone());
      continue;
    }
    std::vector<inputs::DataFile> read;
    CONVGATE_ASSIGN_OR_RETURN(TensorMap made, facts.dataset->make(index, read));
    samples.samples.push_back(std::move(made));
  }
  CONVGATE_ASSIGN_OR_RETURN(folder, TempDir::Create("calibration"));
  const std::filesystem::path path = folder->path() / "calibration.npz";
  CONVGATE_RETURN_IF_ERROR(inputs::SaveDataset(path, samples, facts.signature));
  request.params.emplace("calibration", path.string());
  return Status::OK();
}

// The quantization profile's top-1 rule: int8 may move every score, but the class a classifier
// picks must stay the same on (nearly) every row. Added on each output of the source that reads
// as class scores unless the user already put a check on it: one named like logits or
// probabilities (compare::PredictionKindFor), or, for a model whose task is a classification
// (graph::DetectTask: torchvision's [batch, 1000] "output"), a floating [N, C >= 2] output.
void AddQuantizedTop1(const convert::ConversionRequest& conversion, const Signature& source,
                      const std::optional<graph::DetectedTask>& task,
                      compare::AgreementConfig& agreement) {
  if (!IsQuantizedKind(conversion.kind)) return;
  const bool classifier = task && task->task.ends_with("classification");
  for (const TensorInfo& output : source.outputs) {
    if (!output.dtype || !output.has_shape || output.shape.empty()) continue;
    std::vector<int64_t> dims;
    for (const Dim& dim : output.shape) dims.push_back(dim.is_fixed() ? dim.value : 1);
    if (!output.shape.back().is_fixed()) continue;  // the classes must be known
    Result<Shape> shape = Shape::Make(dims);
    if (!shape.ok()) continue;
    const bool scores =
        compare::PredictionKindFor(output.name, *output.dtype, *shape,
                                   /*named=*/classifier && dims.size() == 2 && dims.back() >= 2) ==
        compare::PredictionKind::kScores;
    if (!scores) continue;
    bool checked = false;
    for (const compare::AgreementCheck& check : agreement.checks)
      checked |= check.output == output.name;
    if (checked) continue;
    Result<compare::AgreementCheck> top1 =
        compare::ParseAgreementCheck(output.name + ":top1>=" + FormatShortest(kQuantizedMinTop1));
    if (top1.ok()) agreement.checks.push_back(std::move(*top1));
  }
}

std::optional<GateError> Convert(const VerifyOptions& options, const internal::SourceFacts& facts,
                                 VerifyReport& report) {
  convert::ConversionRequest request = options.conversion;
  request.source = options.source;
  std::optional<TempDir> calibration;
  if (Status set = SetCalibrationSamples(facts, calibration, request); !set.ok()) {
    return GateError{set.code() == StatusCode::kInvalidArgument ? Stage::kFlags : Stage::kInputs,
                     set};
  }
  if (!options.model_type.empty() && request.kind.starts_with("optimum-")) {
    request.params.emplace("model_type", options.model_type);  // --param model_type wins
  }
  if (Status inputs = SetExportInputs(facts, request); !inputs.ok()) {
    return GateError{Stage::kFlags, inputs};
  }
  // An optimum export takes seconds; the hf runner the precheck started imports what the export's
  // model will need meanwhile.
  if (request.kind == "optimum-openvino") backends::WarmHfRunner({"openvino"});
  if (request.kind == "optimum-onnx") backends::WarmHfRunner({"onnxruntime"});
  convert::ConversionRecord failed;
  Result<convert::ConversionRecord> record = convert::Convert(request, &failed);
  if (!record.ok()) {
    report.conversion = failed;
    report.conversion_detail = request.kind + ": " + failed.tool;
    const Stage stage =
        failed.error == convert::ConversionError::kBadRequest ? Stage::kFlags : Stage::kConvert;
    if (stage == Stage::kConvert) report.conversion_path = ReferencePath(request.kind, failed.tool);
    return GateError{stage, record.status()};
  }
  // The record's output_hold comes along: without -o the target is read where it was made (the
  // cache entry stays locked, so a concurrent `cache prune` skips it, or the temporary folder of
  // a conversion the cache could not take stays) until the report goes.
  report.conversion = *record;
  report.conversion_path = ReferencePath(record->kind, record->tool);
  report.conversion_detail = ConversionPath(*record);
  report.target = record->output_path.empty() ? record->cache_path : record->output_path;
  // optimum's ONNX export of a Hugging Face folder is verified as a whole against its source:
  // the export folder (config.json beside the .onnx files) runs on the hf backend through
  // optimum's ORTModelFor* classes, which feed a decoder its past key/values and generate, as the
  // source does on PyTorch. Its main .onnx file alone lacks that loop (past_key_values.0.key
  // would be a missing input).
  const std::filesystem::path folder = std::filesystem::path(report.target).parent_path();
  std::error_code error;
  if (record->kind == "optimum-onnx" &&
      std::filesystem::is_regular_file(std::filesystem::path(request.source) / "config.json",
                                       error) &&
      std::filesystem::is_regular_file(folder / "config.json", error)) {
    report.target = folder.string();
  }
  return std::nullopt;
}

bool ChoosesPath(const VerifyOptions& options) {
  return options.conversion.kind == "auto" ||
         (options.conversion.kind.empty() && options.conversion.converter_argv.empty() &&
          options.target.empty());
}

// The conversion chosen from the source (verify_path.h): each path in turn until one converts;
// every attempt and why is recorded.
// `chosen` becomes the request that converted (or the last one tried).
std::optional<GateError> ConvertByPath(const VerifyOptions& options,
                                       const internal::SourceFacts& facts, VerifyReport& report,
                                       convert::ConversionRequest& chosen) {
  std::optional<GateError> failed;
  for (const internal::PathStep& step :
       internal::ChooseVerifyPaths(options.source, options.optimum_supported, options.model_type)) {
    VerifyOptions attempt = options;
    attempt.conversion.kind = step.kind;
    chosen = attempt.conversion;
    VerifyReport tried;
    failed = Convert(attempt, facts, tried);
    report.conversion = tried.conversion;
    report.conversion_path = tried.conversion_path;
    report.conversion_detail = tried.conversion_detail;
    report.target = tried.target;
    std::string line = step.kind + " (" + step.why + "): ";
    if (!failed) {
      report.path_attempts.push_back(line + "converted");
      return std::nullopt;
    }
    // Any failure moves on, a refusal too (Path A refusing a file that is no Hugging Face
    // folder is what "try A, then B" is for); the last one is the verdict's error.
    report.path_attempts.push_back(line + "failed: " + failed->status.message());
  }
  return failed;
}

// The task from whichever side declares an ONNX graph (a TorchScript source declares too little).
std::optional<graph::DetectedTask> DetectFrom(const std::string& source, const std::string& target,
                                              const std::string& model_type) {
  for (const std::string& path : {source, target}) {
    if (path.empty()) continue;
    if (std::filesystem::is_regular_file(std::filesystem::path(path) / "config.json")) {
      return graph::ResolveHfTask(path, model_type);  // a Hugging Face folder says what it is
    }
    if (std::filesystem::path(path).extension() != ".onnx") continue;
    // The structure is all the task rule reads: no weights, no sha256 (resnet18: 0.3 s less).
    Result<graph::ModelSummary> summary = graph::SummarizeOnnxModelStructure(path);
    if (summary.ok()) return graph::DetectTask(summary->signature, summary->op_histogram);
  }
  return std::nullopt;
}

// The target's own run uses the comparison's inputs (the samples the precheck made, or the loaded
// files) and its target side (backend, --target-exec) but never writes them:
// --save-inputs/--save-outputs belong to the comparison.
RunOptions E2eOptions(const CompareOptions& compare, std::optional<inputs::Dataset> inputs) {
  RunOptions run;
  run.model = compare.target;
  run.backend = compare.target_backend;
  run.exec = compare.target_exec;
  run.data = compare.data;
  run.inputs = std::move(inputs);
  run.backend_factory = compare.backend_factory;
  run.data.save_inputs.reset();
  run.data.save_outputs.reset();
  // The precheck's samples are the loaded files already: read again, they would lose the cast a
  // float16 or bfloat16 input gets (session::CastToDeclared), and be read twice.
  if (run.inputs) {
    run.data.load_inputs.reset();
    run.data.loaders.specs.clear();
  }
  return run;
}

}  // namespace

Status CheckVerifyOptions(const VerifyOptions& options) {
  const bool converts =
      !options.conversion.kind.empty() || !options.conversion.converter_argv.empty();
  if (!converts || options.target.empty()) return Status::OK();
  return Status::InvalidArgument(
      "verify takes one of --to KIND, --target PATH or --converter 'CMD {src} {out}' (none: "
      "the conversion is chosen from SOURCE), not two");
}

VerifyReport VerifyGate(const VerifyOptions& options) {
  VerifyReport report;
  report.source = options.source;
  if (Status valid = CheckVerifyOptions(options); !valid.ok()) {
    return Errored(std::move(report), Stage::kFlags, valid);
  }
  // Before a conversion that may take minutes; the comparison checks again with its target.
  if (auto e = session::CheckSavePaths(options.compare.data,
                                       {{"the source", options.source},
                                        {"the target", options.target},
                                        {"the conversion's output", options.conversion.output}})) {
    return Errored(std::move(report), e->stage, e->status);
  }
  CompareOptions compare = options.compare;
  compare.source = options.source;
  // Optimum's ONNX export validation compares the decoder's present key/values besides the
  // logits; so does this gate for that export (an OpenVINO export keeps them inside the model).
  if (options.conversion.kind == "optimum-onnx") compare.data.present_key_values = true;
  // The conversion cache's key and both reports need the source's sha256: hashed on the other
  // core while the precheck loads the source (resnet18, 47 MB: ~0.3 s on this machine's CPU).
  PrefetchSha256(options.source);
  convert::ConversionRequest chosen = options.conversion;  // the kind verify chose, when it did
  // Everything the flags can get wrong is found before a conversion that may take minutes.
  internal::SourceFacts facts;
  if (auto e = internal::PrecheckSource(compare, facts)) {
    report.task = DetectFrom(options.source, "", options.model_type);
    return Errored(std::move(report), e->stage, e->status);
  }
  if (options.conversion.kind == "opencv") {
    // ONNX -> OpenCV DNN converts no file: the same model runs on another runtime.
    report.target = options.source;
    compare.target_backend = "opencv";
    report.conversion_path = "opencv";
    report.conversion_detail = "opencv: none (the same ONNX model through OpenCV DNN)";
  } else if (!options.target.empty()) {
    report.target = options.target;
    report.conversion_path = "given";
    report.conversion_detail = "given: " + options.target;
  } else if (ChoosesPath(options)) {
    if (auto e = ConvertByPath(options, facts, report, chosen)) {
      report.task = DetectFrom(options.source, "", options.model_type);
      return Errored(std::move(report), e->stage, e->status);
    }
  } else if (auto e = Convert(options, facts, report)) {
    report.task = DetectFrom(options.source, "", options.model_type);
    return Errored(std::move(report), e->stage, e->status);
  }
  report.conversion_passed = true;
  compare.target = report.target;
  const PairFacts pair{&chosen, report.conversion ? &*report.conversion : nullptr, options.source,
                       report.target};
  ApplyPairPolicy(pair, compare.policy);
  AddFirstStepTop1(pair, facts.signature, compare.agreement);
  // The floors are cached where the conversions are, and --no-cache skips both.
  compare.calibration.cache_dir = options.conversion.cache_dir;
  if (!options.conversion.use_cache) compare.calibration.use_cache = false;
  report.task = DetectFrom(options.source, report.target, options.model_type);
  AddQuantizedTop1(chosen, facts.signature, report.task, compare.agreement);
  // The comparison makes its own samples again; the precheck's go to the target's own run. The
  // target the end-to-end run loaded is compared without loading it again.
  session::LoadedModels loaded(compare.backend_factory);
  compare.backend_factory = &loaded;
  report.e2e = RunModelGate(E2eOptions(compare, std::move(facts.dataset)));
  report.comparison = CompareModelsGate(compare);
  for (const auto* error : {&report.e2e->error, &report.comparison->error}) {
    if (error->has_value() && !report.error) report.error = **error;
  }
  if (report.error) {
    report.verdict = Verdict::kError;
  } else {
    const bool passed = report.e2e_passed() && report.comparison->verdict == Verdict::kPass;
    report.verdict = passed ? Verdict::kPass : Verdict::kFail;
  }
  return report;
}

}  // namespace convgate::gate
