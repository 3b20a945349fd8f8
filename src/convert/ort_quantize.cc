// `--to int8-dynamic` and `--to int8-static`: ONNX Runtime's quantization tools
// (onnxruntime.quantization in the project's venv, pinned) through runtime/ort_quantize.py.
// Dynamic quantizes the weights ahead and the activations at run time; static quantizes both, the
// activations' ranges calibrated on samples (the `calibration` parameter: an .npz as convgate
// writes it; verify fills it with the gate's own inputs, or --data's).
#include <nlohmann/json.hpp>

#include "convert/converter.h"
#include "convert/retry.h"
#include "convgate/core/file_util.h"
#include "convgate/core/install_layout.h"
#include "convgate/core/json_field.h"
#include "convgate/core/python_env.h"

namespace convgate::convert {
namespace {

std::filesystem::path ScriptPath() {
  return RuntimeScript("ort_quantize.py", "CONVGATE_ORT_QUANTIZE_SCRIPT");
}

// The script's command line, {src} and {out} left for the attempt.
Result<std::vector<std::string>> ScriptArgv(const std::string& python, bool dynamic,
                                            const Params& params, std::string_view kind) {
  CONVGATE_RETURN_IF_ERROR(CheckChoice(params, "weight_type", {"qint8", "quint8"}, kind));
  CONVGATE_ASSIGN_OR_RETURN(const bool per_channel, BoolParam(params, "per_channel", false, kind));
  std::vector<std::string> argv = {
      python, ScriptPath().string(), "--mode", dynamic ? "dynamic" : "static", "{src}", "{out}"};
  if (auto found = params.find("weight_type"); found != params.end()) {
    argv.insert(argv.end(), {"--weight-type", found->second});
  }
  if (per_channel) argv.push_back("--per-channel");
  if (auto found = params.find("op_types"); found != params.end()) {
    argv.insert(argv.end(), {"--op-types", found->second});
  }
  if (auto found = params.find("node_block_list"); found != params.end()) {
    argv.insert(argv.end(), {"--nodes-to-exclude", found->second});
  }
  if (dynamic) {
    for (const char* only_static : {"calibration", "format", "calibrate_method"}) {
      if (params.count(only_static) > 0) {
        return Status::InvalidArgument("parameter " + std::string(only_static) +
                                       " is for --to int8-static; --to int8-dynamic quantizes "
                                       "activations at run time and calibrates nothing");
      }
    }
    return argv;
  }
  CONVGATE_RETURN_IF_ERROR(CheckChoice(params, "format", {"qdq", "qoperator"}, kind));
  CONVGATE_RETURN_IF_ERROR(
      CheckChoice(params, "calibrate_method", {"minmax", "entropy", "percentile"}, kind));
  CONVGATE_ASSIGN_OR_RETURN(const std::string calibration, CalibrationParam(params, kind));
  argv.insert(argv.end(), {"--calibration", calibration});
  for (const auto& [param, flag] :
       {std::pair{"format", "--format"}, {"calibrate_method", "--calibrate-method"}}) {
    if (auto found = params.find(param); found != params.end()) {
      argv.insert(argv.end(), {flag, found->second});
    }
  }
  return argv;
}

AttemptResult RunScript(const std::vector<std::string>& argv_template,
                        const std::filesystem::path& source, const std::filesystem::path& out,
                        double timeout_seconds) {
  std::vector<std::string> argv;
  for (const std::string& arg : argv_template) {
    argv.push_back(arg == "{src}" ? source.string() : arg == "{out}" ? out.string() : arg);
  }
  SubprocessResult run;
  AttemptResult attempt = RunConversionScript(argv, timeout_seconds, &run);
  if (!attempt.ok()) return attempt;
  // The script's last stdout line is a JSON record of what it quantized.
  nlohmann::json record = nlohmann::json::parse(TailLines(run.stdout_tail, 1), nullptr, false);
  if (record.is_object()) {
    attempt.tool_version = "onnxruntime " + JsonTextOr(record, "onnxruntime_version", "");
    std::string ops;
    if (record.contains("quantized_ops") && record["quantized_ops"].is_object()) {
      for (const auto& [op, count] : record["quantized_ops"].items()) {
        ops += (ops.empty() ? "" : ", ") + op + " x" + count.dump();
      }
    }
    attempt.notes.push_back("quantized ops: " + (ops.empty() ? std::string("none") : ops));
    if (record.contains("constants_to_initializers")) {
      attempt.notes.push_back(record["constants_to_initializers"].dump() +
                              " Constant node(s) moved into initializers first (the quantizer "
                              "reads weights only from initializers)");
    }
    if (record.contains("calibration_samples")) {
      attempt.notes.push_back("activation ranges calibrated on " +
                              record["calibration_samples"].dump() + " sample(s)");
    }
  }
  return attempt;
}

}  // namespace

Result<Converter> MakeQuantizeConverter(const ConversionRequest& request) {
  const bool dynamic = request.kind == "int8-dynamic";
  CONVGATE_ASSIGN_OR_RETURN(std::filesystem::path python, VenvPython());
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::string> argv,
                            ScriptArgv(python.string(), dynamic, request.params, request.kind));
  Converter converter;
  converter.tool = "onnxruntime.quantization";
  CONVGATE_ASSIGN_OR_RETURN(converter.tool_version,
                            PythonPackageVersions(python.string(), {"onnxruntime"}));
  // Part of the cache key: bump whenever ort_quantize.py writes a different model for the same
  // input (2: Constant nodes moved into initializers first; external data kept external; 3:
  // node_block_list).
  converter.tool_version += " (ort_quantize.py revision 3)";
  converter.display = std::string("ONNX Runtime's ") +
                      (dynamic ? "quantize_dynamic" : "quantize_static") + " (int8)";
  // The calibration samples decide a static model: their content, not the file's path.
  if (auto calibration = request.params.find("calibration"); calibration != request.params.end()) {
    Result<std::string> digest = Sha256File(calibration->second);
    if (digest.ok()) converter.identity = "calibration sha256 " + *digest;
  }
  converter.attempt = [argv](const std::filesystem::path& source, const std::filesystem::path& out,
                             double timeout) { return RunScript(argv, source, out, timeout); };
  return converter;
}

}  // namespace convgate::convert
