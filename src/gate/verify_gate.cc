// `convgate verify`: convert, run the sanity gate on the target, compare with the source.
#include <chrono>

#include "convgate/backends/registry.h"
#include "convgate/gate/verify.h"
#include "convgate/graph/onnx_model.h"
#include "save_paths.h"

namespace convgate::gate {
namespace {

VerifyReport Errored(VerifyReport report, Stage stage, Status status) {
  report.error = GateError{stage, std::move(status)};
  report.verdict = Verdict::kError;
  return report;
}

// "fp16: convgate fp16 1 (cache hit)", "onnx: torch.onnx.export via scripts/torch_export.py
// (torch 1.13.1)": which conversion, by which tool at which version.
std::string ConversionPath(const convert::ConversionRecord& record) {
  std::string path = record.kind + ": " + record.tool;
  if (!record.tool_version.empty()) path += " " + record.tool_version;
  if (record.cache_hit) path += " (cache hit)";
  return path;
}

Status CheckOneTarget(const VerifyOptions& options) {
  const int ways = !options.to.empty() + !options.target.empty() + !options.converter_argv.empty();
  if (ways == 1) return Status::OK();
  return Status::InvalidArgument(
      "verify needs exactly one of --to KIND, --target PATH or --converter 'CMD {src} {out}'");
}

// The target from a conversion; fills the report's conversion fields. Errors are Stage::kConvert,
// or Stage::kFlags for a bad request.
std::optional<GateError> Convert(const VerifyOptions& options, VerifyReport& report) {
  convert::ConversionRequest request;
  request.source = options.source;
  request.kind = options.converter_argv.empty() ? options.to : "external";
  request.params = options.params;
  request.converter_argv = options.converter_argv;
  request.output = options.output;
  request.timeout_seconds = options.timeout_seconds;
  request.max_attempts = options.max_attempts;
  request.use_cache = options.use_cache;
  convert::ConversionRecord failed;
  Result<convert::ConversionRecord> record = convert::Convert(request, &failed);
  if (!record.ok()) {
    report.conversion = failed;
    report.conversion_path = request.kind + ": " + failed.tool;
    const Stage stage =
        failed.error == convert::ConversionError::kBadRequest ? Stage::kFlags : Stage::kConvert;
    return GateError{stage, record.status()};
  }
  report.conversion = *record;
  report.conversion_path = ConversionPath(*record);
  report.target = record->output_path.empty() ? record->cache_path : record->output_path;
  return std::nullopt;
}

// The task from whichever side declares an ONNX graph (a TorchScript source declares too little).
std::optional<DetectedTask> DetectFrom(const std::string& source, const std::string& target) {
  for (const std::string& path : {source, target}) {
    if (path.empty() || std::filesystem::path(path).extension() != ".onnx") continue;
    Result<graph::ModelSummary> summary = graph::SummarizeOnnxModel(path);
    if (summary.ok()) return DetectTask(summary->signature, summary->op_histogram);
  }
  return std::nullopt;
}

// The target's own run uses the comparison's inputs (same seed, loaded files) but never writes
// them: --save-inputs/--save-outputs belong to the comparison.
RunOptions E2eOptions(const VerifyOptions& options, const std::string& target,
                      const std::string& backend) {
  RunOptions run;
  run.model = target;
  run.backend = backend;
  run.data = options.compare.data;
  run.data.save_inputs.reset();
  run.data.save_outputs.reset();
  return run;
}

// A float16 conversion judged under float32 defaults fails on any deep network: say what to use.
void HintFloat16Tolerances(const VerifyOptions& options, CompareReport& comparison) {
  const bool fp16 = options.to == "fp16" || options.to.starts_with("fp16:");
  const compare::PolicySettings& global = options.compare.policy.global;
  if (!fp16 || global.atol || global.rtol) return;
  for (OutputCheck& check : comparison.checks) {
    if (check.passed || check.policy.atol_origin.find("float32 default") == std::string::npos) {
      continue;
    }
    check.hints.push_back(
        "the target computes in float16 (--to fp16) but this output is judged under float32 "
        "defaults, which no deep network meets in float16: pass network-level float16 "
        "tolerances, e.g. --policy examples/policies/fp16-network.yaml (measured on "
        "torchvision models, README 'Tolerance policy')");
  }
}

}  // namespace

VerifyReport VerifyGate(const VerifyOptions& options) {
  VerifyReport report;
  report.source = options.source;
  if (Status valid = CheckOneTarget(options); !valid.ok()) {
    return Errored(std::move(report), Stage::kFlags, valid);
  }
  // Before a conversion that may take minutes; the comparison checks again with its target.
  if (auto e = internal::CheckSavePaths(options.compare.data,
                                        {{"the source", options.source},
                                         {"the target", options.target},
                                         {"the conversion's output", options.output}})) {
    return Errored(std::move(report), e->stage, e->status);
  }
  CompareOptions compare = options.compare;
  compare.source = options.source;
  if (options.to == "opencv") {
    // ONNX -> OpenCV DNN converts no file: the same model runs on another runtime.
    report.target = options.source;
    compare.target_backend = "opencv";
    report.conversion_path = "opencv: none (the same ONNX model through OpenCV DNN)";
  } else if (!options.target.empty()) {
    report.target = options.target;
    report.conversion_path = "given: " + options.target;
  } else if (auto e = Convert(options, report)) {
    report.task = DetectFrom(options.source, "");
    return Errored(std::move(report), e->stage, e->status);
  }
  report.conversion_passed = true;
  compare.target = report.target;
  report.task = DetectFrom(options.source, report.target);
  report.e2e = RunModelGate(E2eOptions(options, report.target, compare.target_backend));
  report.comparison = CompareModelsGate(compare);
  HintFloat16Tolerances(options, *report.comparison);
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
