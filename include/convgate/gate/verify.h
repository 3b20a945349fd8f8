// `convgate verify`: the full gate of OpenVINO's verify-conversion skill, for real: convert (or
// take the given target), run the end-to-end sanity gate on the target, compare it with the
// source. verify_passed is true only when the conversion, the end-to-end inference and the
// comparison all pass.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convgate/convert/convert.h"
#include "convgate/gate/results.h"
#include "convgate/gate/workflows.h"
#include "convgate/graph/task.h"

namespace convgate::gate {

struct VerifyOptions {
  std::string source;
  // Exactly one way to get the target: an already converted model, or a conversion (its source is
  // set by VerifyGate): conversion.kind is a kind of convert.h ("external" with converter_argv),
  // or "opencv": the source ONNX model itself through OpenCV DNN (no file conversion).
  std::string target;
  convert::ConversionRequest conversion;
  // Backends, inputs, policy and agreement checks of the comparison; source and target are set
  // by VerifyGate.
  CompareOptions compare;
  // With no way to the target given (or conversion.kind "auto"), the conversion is chosen from
  // the source as OpenVINO's verify-conversion gate does (docs/openvino.md, Step 1);
  // optimum_supported false (from a --context file) leaves Path A out.
  std::optional<bool> optimum_supported;
  // A declared model type (--model-type): an optimum export's model_type parameter (steering its
  // task, graph::TaskOfModelType) unless --param sets one, and the task verify_result.json says.
  std::string model_type;
};

// A --context file (the orchestrator's pipeline_state.json): which model, whether optimum
// supports it, and where verify_result.json goes: the folder `verify-conversion` beside it
// (agent-results/<agent>/verify_result.json).
struct VerifyContext {
  std::filesystem::path path;
  std::string model_id;  // as written; resolved against the file's folder when that exists
  std::optional<bool> optimum_supported;
  std::filesystem::path out_dir;
};
// InvalidArgument naming the file for unreadable JSON or fields of the wrong type; NotFound for a
// missing file.
Result<VerifyContext> ReadVerifyContext(const std::filesystem::path& path);

// What can be checked without touching a file: at most one way to the target. InvalidArgument.
Status CheckVerifyOptions(const VerifyOptions& options);

struct VerifyReport {
  std::string source;
  std::string target;  // the converted model that was verified
  // verify_result's conversion_path, one word as the reference gives it: "optimum-cli", "ovc",
  // "convert_model" for the OpenVINO paths; convgate's own conversions by their kind's name
  // ("fp16", "opset", "ort-optimized", "onnx", "external", "opencv"); "given" for --target.
  // Empty for a usage error (nothing was chosen to run).
  std::string conversion_path;
  // What turned source into target in words (report.json): the kind, the tool and its version,
  // a cache hit, a fallback taken: "optimum-openvino: optimum-cli export openvino
  // (openvino_export.py) optimum 2.1.0, ...; fallback: weight_format int4, because ...".
  std::string conversion_detail;
  // The conversions tried when verify chose the path, in order, each with why and how it ended:
  // "optimum-openvino (a Hugging Face model folder (config.json): Path A, optimum-cli): converted".
  std::vector<std::string> path_attempts;
  std::optional<convert::ConversionRecord> conversion;  // absent when the target was given
  bool conversion_passed = false;
  std::optional<RunReport> e2e;             // the sanity gate on the target (absent if not reached)
  std::optional<CompareReport> comparison;  // absent if not reached
  std::optional<graph::DetectedTask> task;
  Verdict verdict = Verdict::kError;
  // Set when the conversion failed (Stage::kConvert) or a flag was wrong; errors of the e2e run
  // or the comparison stay in their reports and are copied here too.
  std::optional<GateError> error;

  bool e2e_passed() const { return e2e && !e2e->error && e2e->verdict == Verdict::kPass; }
};

VerifyReport VerifyGate(const VerifyOptions& options);

}  // namespace convgate::gate
