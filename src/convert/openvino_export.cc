// Conversions to OpenVINO and Hugging Face exports through runtime/openvino_export.py, run by the
// project's Python environment (core/python_env.h):
//   openvino, openvino:fp16  ONNX / TorchScript via openvino.convert_model + save_model, a
//                            TensorFlow SavedModel folder via ovc (the seed's Path B); an IR
//   optimum-openvino         a Hugging Face model folder via `optimum-cli export openvino` (Path
//   A),
//                            fp16 weights falling back to int4 when the export runs out of memory
//                            or time; a folder
//   optimum-onnx             the same folder via `optimum-cli export onnx`; a folder
#include <algorithm>
#include <cctype>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "convert/converter.h"
#include "convert/output.h"
#include "convert/retry.h"
#include "convgate/backends/openvino_ir.h"
#include "convgate/core/file_util.h"
#include "convgate/core/install_layout.h"
#include "convgate/core/join.h"
#include "convgate/core/json_field.h"
#include "convgate/core/python_env.h"
#include "convgate/graph/task.h"

namespace convgate::convert {
namespace {

// The weight format the seed falls back to when the fp16 export runs out of memory or time.
constexpr char kFallbackFormat[] = "int4";
// The script writes its JSON record here, beside the output in the work directory.
constexpr char kRecordName[] = "export-record.json";

enum class Flavor { kNative, kOptimumOpenvino, kOptimumOnnx };

struct Plan {
  Flavor flavor = Flavor::kNative;
  bool fp16 = false;  // native: compress_to_fp16
  // native, openvino:int8: NNCF's post-training quantization, calibrated on these samples (an
  // .npz); script flags for its preset and the nodes it leaves in float32.
  bool int8 = false;
  std::string calibration;
  std::vector<std::string> int8_flags;
  std::string task = "auto";  // optimum's task; "auto": ResolveTask
  std::string task_evidence;  // why that task: a note in the record
  std::string model_type;     // declared (the model_type parameter): steers task=auto
  std::string weight_format = "fp16";
  std::string group_size;
  bool fallback = true;
  // native, a TorchScript source: the IR's input names, and static shapes and dtypes (verify sets
  // them from --shape/--load-inputs); script flags, in order.
  std::vector<std::string> input_flags;
};

std::filesystem::path ScriptPath() {
  return RuntimeScript("openvino_export.py", "CONVGATE_OPENVINO_EXPORT_SCRIPT");
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// What convert_model reads as TorchScript (openvino_export.py's TORCHSCRIPT_SUFFIXES).
bool IsTorchScriptFile(const std::filesystem::path& source) {
  const std::string extension = Lower(source.extension().string());
  return extension == ".pt" || extension == ".pth" || extension == ".ts" ||
         extension == ".torchscript";
}

// openvino:int8's parameters: the calibration samples (verify writes its own), NNCF's preset, and
// the nodes left in float32.
Status ReadInt8Params(const Params& params, const std::string& kind, Plan& plan) {
  CONVGATE_ASSIGN_OR_RETURN(plan.calibration, CalibrationParam(params, kind));
  CONVGATE_RETURN_IF_ERROR(CheckChoice(params, "preset", {"performance", "mixed"}, kind));
  if (auto preset = params.find("preset"); preset != params.end()) {
    plan.int8_flags.insert(plan.int8_flags.end(), {"--preset", preset->second});
  }
  if (auto ignored = params.find("node_block_list"); ignored != params.end()) {
    plan.int8_flags.insert(plan.int8_flags.end(), {"--ignored-nodes", ignored->second});
  }
  return Status::OK();
}

Result<Plan> ReadPlan(const ConversionRequest& request) {
  Plan plan;
  const std::string& kind = request.kind;
  if (kind.rfind("openvino:", 0) == 0 && kind != "openvino:fp16" && kind != "openvino:int8") {
    return Status::InvalidArgument("--to " + kind +
                                   ": the OpenVINO conversions are openvino "
                                   "(float32 weights), openvino:fp16 and openvino:int8");
  }
  plan.flavor = kind == "optimum-openvino" ? Flavor::kOptimumOpenvino
                : kind == "optimum-onnx"   ? Flavor::kOptimumOnnx
                                           : Flavor::kNative;
  plan.fp16 = kind == "openvino:fp16";
  plan.int8 = kind == "openvino:int8";
  const Params& params = request.params;
  if (plan.int8) CONVGATE_RETURN_IF_ERROR(ReadInt8Params(params, kind, plan));
  if (auto task = params.find("task"); task != params.end()) plan.task = task->second;
  if (auto type = params.find("model_type"); type != params.end()) plan.model_type = type->second;
  if (auto format = params.find("weight_format"); format != params.end()) {
    plan.weight_format = format->second;
    if (plan.weight_format != "fp16" && plan.weight_format != "int8" &&
        plan.weight_format != "int4") {
      return Status::InvalidArgument("parameter weight_format='" + plan.weight_format +
                                     "' for --to " + kind + ": fp16, int8 or int4");
    }
  }
  CONVGATE_ASSIGN_OR_RETURN(std::optional<int64_t> group_size,
                            IntParam(params, "group_size", kind));
  if (group_size) plan.group_size = std::to_string(*group_size);
  if (auto fallback = params.find("fallback"); fallback != params.end()) {
    if (fallback->second != kFallbackFormat && fallback->second != "none") {
      return Status::InvalidArgument("parameter fallback='" + fallback->second + "' for --to " +
                                     kind + ": int4 or none");
    }
    plan.fallback = fallback->second == kFallbackFormat;
  }
  for (const auto& [param, flag] : {std::pair{"input_names", "--input-names"},
                                    {"input_shape", "--input-shape"},
                                    {"input_dtype", "--input-dtype"}}) {
    auto found = params.find(param);
    if (found == params.end()) continue;
    if (!IsTorchScriptFile(request.source)) {
      return Status::InvalidArgument("parameter " + std::string(param) + " for --to " + kind +
                                     " names and shapes a TorchScript source's inputs; " +
                                     request.source.string() + " is not TorchScript (.pt)");
    }
    if (std::string_view(param) == "input_names") {
      plan.input_flags.insert(plan.input_flags.end(), {flag, found->second});
      continue;
    }
    for (const std::string& item : SplitList(found->second)) {
      plan.input_flags.insert(plan.input_flags.end(), {flag, item});
    }
  }
  return plan;
}

// task=auto: the verify-conversion gate's rule, graph::ResolveHfTask, the one verify reports as
// verify_result.json's task. A config.json it cannot read gets the seed's default (its `except`).
void ResolveTask(const std::filesystem::path& source, Plan& plan) {
  if (plan.flavor == Flavor::kNative) return;
  if (plan.task != "auto") {
    plan.task_evidence = "the task parameter";
    return;
  }
  std::optional<graph::DetectedTask> task = graph::ResolveHfTask(source, plan.model_type);
  plan.task = task ? task->task : "text-generation-with-past";
  plan.task_evidence = task ? task->evidence : "no readable config.json: the gate's default";
}

// Checked before anything runs; a missing source is the driver's kSourceNotFound.
Status CheckSource(const std::filesystem::path& source, Flavor flavor, const std::string& kind) {
  std::error_code error;
  if (!std::filesystem::exists(source, error)) return Status::OK();
  const bool folder = std::filesystem::is_directory(source, error);
  if (flavor == Flavor::kNative) {
    if (!folder || std::filesystem::is_regular_file(source / "saved_model.pb", error) ||
        std::filesystem::is_regular_file(source / "config.json", error)) {
      return Status::OK();
    }
    return Status::InvalidArgument(
        source.string() +
        " is a folder but neither a TensorFlow SavedModel (no saved_model.pb) nor a Hugging Face "
        "model folder (no config.json): --to " +
        kind + " converts an ONNX or TorchScript file, a SavedModel or a Hugging Face folder");
  }
  if (folder && std::filesystem::is_regular_file(source / "config.json", error)) {
    return Status::OK();
  }
  return Status::InvalidArgument("--to " + kind + " exports a Hugging Face model folder " +
                                 "(config.json + weights), which " + source.string() + " is not");
}

std::vector<std::string> BaseArgv(const std::string& python, const std::string& script,
                                  const Plan& plan) {
  if (plan.flavor == Flavor::kNative) {
    std::vector<std::string> argv = {python, script, "native"};
    if (plan.fp16) argv.push_back("--fp16");
    if (plan.int8) {
      argv.insert(argv.end(), {"--int8", "--calibration", plan.calibration});
      argv.insert(argv.end(), plan.int8_flags.begin(), plan.int8_flags.end());
    }
    argv.insert(argv.end(), plan.input_flags.begin(), plan.input_flags.end());
    return argv;
  }
  std::vector<std::string> argv = {python,
                                   script,
                                   "optimum",
                                   "--exporter",
                                   plan.flavor == Flavor::kOptimumOnnx ? "onnx" : "openvino",
                                   "--task",
                                   plan.task};
  if (!plan.group_size.empty()) argv.insert(argv.end(), {"--group-size", plan.group_size});
  return argv;
}

// The export ran out of memory or time: killed by SIGKILL (the OOM killer), by convgate's timeout,
// or a Python MemoryError / "out of memory" in its output. A hang (no CPU progress) is neither,
// though convgate's SIGKILL may have ended it.
bool RanOutOfMemoryOrTime(const SubprocessResult& run) {
  if (run.interrupted_by != 0 || run.hung) return false;  // convgate itself stopped it
  if (run.timed_out || run.signal == SIGKILL) return true;
  const std::string log = Lower(run.stderr_tail);
  return log.find("memoryerror") != std::string::npos ||
         log.find("out of memory") != std::string::npos;
}

// The model files of a Hugging Face export folder with `extension`, main one first: the
// single-model names optimum writes for decoder-only and encoder-only models, then the decoder and
// encoder of a sequence-to-sequence export, then any other in name order.
Result<std::vector<std::string>> ModelFiles(const std::filesystem::path& folder,
                                            const std::string& extension,
                                            const std::vector<std::string>& preferred) {
  std::vector<std::string> found;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(folder, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (it->path().extension() == extension) found.push_back(it->path().filename().string());
  }
  if (found.empty()) {
    return Status::NotFound("the export folder " + folder.string() + " holds no " + extension +
                            " model");
  }
  std::sort(found.begin(), found.end());
  auto rank = [&preferred](const std::string& name) {
    return std::find(preferred.begin(), preferred.end(), name) - preferred.begin();
  };
  std::stable_sort(found.begin(), found.end(), [&rank](const std::string& a, const std::string& b) {
    return rank(a) < rank(b);
  });
  return found;
}

Result<std::vector<std::string>> ExportModels(const std::filesystem::path& folder, Flavor flavor) {
  if (flavor == Flavor::kOptimumOnnx) {
    return ModelFiles(
        folder, ".onnx",
        {"model.onnx", "decoder_model_merged.onnx", "decoder_model.onnx", "encoder_model.onnx"});
  }
  return ModelFiles(folder, ".xml",
                    {"openvino_model.xml", "openvino_language_model.xml",
                     "openvino_decoder_model.xml", "openvino_encoder_model.xml"});
}

// optimum's int4 group size when none is given.
constexpr int64_t kOptimumGroupSize = 128;
// Below this, groups are too small to be worth their scales: per-channel (-1) instead.
constexpr int64_t kSmallestGroupSize = 16;

// The input widths of a model's weight matrices as config.json gives them (the hidden size, the
// feed-forward width, t5's attention width), and their greatest common divisor: a group size must
// divide every one. Absent when config.json names none.
std::optional<std::pair<int64_t, std::string>> WeightWidths(const std::filesystem::path& folder) {
  std::ifstream file(folder / "config.json");
  const nlohmann::json config = nlohmann::json::parse(file, nullptr, false);
  if (!config.is_object()) return std::nullopt;
  int64_t divisor = 0;
  std::string named;
  auto add = [&](const std::string& key, int64_t width) {
    if (width <= 0) return;
    divisor = std::gcd(divisor, width);
    named += (named.empty() ? "" : ", ") + key + " " + std::to_string(width);
  };
  auto integer = [&config](const char* key) -> int64_t {
    auto found = config.find(key);
    return found != config.end() && found->is_number_integer() ? found->get<int64_t>() : 0;
  };
  for (const char* key : {"hidden_size", "n_embd", "d_model", "intermediate_size", "n_inner",
                          "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim"}) {
    add(key, integer(key));
  }
  if (integer("d_kv") > 0 && integer("num_heads") > 0) {
    add("num_heads x d_kv", integer("d_kv") * integer("num_heads"));
  }
  if (divisor == 0) return std::nullopt;
  return std::make_pair(divisor, named);
}

// The int4 group size for an export of `folder` with none given: optimum's 128 when it divides
// every weight width, else the largest power of two below it that does (per-channel, -1, when that
// is under kSmallestGroupSize). Empty when 128 fits or the widths are unknown; `note` says why
// another was taken.
std::string FittingGroupSize(const std::filesystem::path& folder, std::string& note) {
  std::optional<std::pair<int64_t, std::string>> widths = WeightWidths(folder);
  if (!widths || widths->first % kOptimumGroupSize == 0) return "";
  int64_t group = kOptimumGroupSize;
  while (group > 1 && widths->first % group != 0) group /= 2;
  const std::string size = group < kSmallestGroupSize ? "-1" : std::to_string(group);
  note = "int4 group size " + size + (size == "-1" ? " (per channel)" : "") +
         " instead of optimum's " + std::to_string(kOptimumGroupSize) +
         ", which does not divide the weight widths of config.json (" + widths->second + ")";
  return size;
}

class OpenvinoAttempt {
 public:
  OpenvinoAttempt(std::vector<std::string> base_argv, Plan plan)
      : base_argv_(std::move(base_argv)), plan_(std::move(plan)) {}

  AttemptResult operator()(const std::filesystem::path& source, const std::filesystem::path& out,
                           double timeout_seconds) const {
    if (plan_.flavor == Flavor::kNative) return Run(source, out, "", timeout_seconds, nullptr);
    if (plan_.flavor == Flavor::kOptimumOnnx) {
      return Finish(Run(source, out, "", timeout_seconds, nullptr), out);
    }
    SubprocessResult run;
    AttemptResult first = Run(source, out, plan_.weight_format, timeout_seconds, &run);
    // A hang (no CPU progress: a deadlock) is retried once as it was, before any fallback: it
    // says nothing about memory, and a deadlock at import or in a thread pool may not recur.
    std::string hang;
    if (!first.ok() && run.hung) {
      RemoveWorkDir(out);
      hang = "the " + plan_.weight_format + " export " + first.problem;
      SubprocessResult rerun;
      AttemptResult again = Run(source, out, plan_.weight_format, timeout_seconds, &rerun);
      if (again.ok()) again.notes.insert(again.notes.begin(), "retried once: " + hang);
      if (!again.ok()) again.problem += " after " + hang + " and was retried once";
      again.transient = false;  // retried here already: the driver's retries would repeat it
      first = std::move(again);
      run = rerun;
    }
    if (first.ok() || !plan_.fallback || plan_.weight_format == kFallbackFormat ||
        !(RanOutOfMemoryOrTime(run) || run.hung)) {
      return Finish(std::move(first), out);
    }
    // The seed's fallback: int4 weights need about a quarter of fp16's memory (and a timeout,
    // which a hang is, falls back too). The retry gets the whole timeout again, so a falling-back
    // attempt may take up to twice --timeout (three times after a hang).
    RemoveWorkDir(out);
    const std::string why = kFallbackNotePrefix + std::string("weight_format ") + kFallbackFormat +
                            ", because the " + plan_.weight_format + " export " +
                            (run.hung        ? "hung twice ("
                             : run.timed_out ? "ran out of time ("
                                             : "ran out of memory (") +
                            first.problem + ")";
    AttemptResult second = Run(source, out, kFallbackFormat, timeout_seconds, nullptr);
    if (!second.ok()) {
      second.problem += " after the " + plan_.weight_format + " export " + first.problem +
                        " and fell back to " + kFallbackFormat;
      second.transient = false;  // both formats failed: another round would too
      return second;
    }
    second.notes.insert(second.notes.begin(), why);
    return Finish(std::move(second), out);
  }

 private:
  AttemptResult Run(const std::filesystem::path& source, const std::filesystem::path& out,
                    const std::string& weight_format, double timeout_seconds,
                    SubprocessResult* process) const {
    std::vector<std::string> argv = base_argv_;
    const std::filesystem::path record = out.parent_path() / kRecordName;
    const char* source_flag = plan_.flavor == Flavor::kNative ? "--source" : "--model";
    argv.insert(argv.end(),
                {source_flag, source.string(), "--out", out.string(), "--record", record.string()});
    if (!weight_format.empty()) argv.insert(argv.end(), {"--weight-format", weight_format});
    std::string group_note;
    if (weight_format == kFallbackFormat && plan_.group_size.empty()) {
      const std::string group = FittingGroupSize(source, group_note);
      if (!group.empty()) argv.insert(argv.end(), {"--group-size", group});
    }
    AttemptResult attempt = RunConversionScript(argv, timeout_seconds, process);
    if (attempt.ok()) ReadRecord(record, weight_format, attempt);
    if (attempt.ok() && !group_note.empty()) attempt.notes.push_back(group_note);
    return attempt;
  }

  // What the export was: its task and why, its weight format, and from the script's record
  // whether ovc converted.
  void ReadRecord(const std::filesystem::path& path, const std::string& weight_format,
                  AttemptResult& attempt) const {
    if (plan_.flavor != Flavor::kNative) {
      attempt.notes.push_back("task " + plan_.task + " (" + plan_.task_evidence + ")");
    }
    if (!weight_format.empty()) attempt.notes.push_back("weight_format " + weight_format);
    std::ifstream file(path);
    nlohmann::json record = nlohmann::json::parse(file, nullptr, false);
    if (!record.is_object()) return;
    if (JsonTextOr(record, "path", "") == "ovc") {
      attempt.notes.push_back("converted by ovc (a TensorFlow SavedModel)");
    }
    if (record.contains("calibration_samples")) {
      attempt.notes.push_back("int8 by nncf.quantize: activation ranges calibrated on " +
                              record["calibration_samples"].dump() + " sample(s)");
    }
  }

  // A folder export must hold a model; the note lists them when there are several.
  AttemptResult Finish(AttemptResult attempt, const std::filesystem::path& out) const {
    if (!attempt.ok()) return attempt;
    std::error_code error;
    if (!std::filesystem::is_directory(out, error)) return attempt;  // CheckOutput says why
    Result<std::vector<std::string>> models = ExportModels(out, plan_.flavor);
    if (!models.ok()) {
      attempt.error = ConversionError::kNoOutput;
      attempt.problem = "it reported success but " + models.status().message();
      return attempt;
    }
    if (models->size() > 1) {
      const std::string named = plan_.flavor == Flavor::kOptimumOnnx
                                    ? "the record names " + models->front()
                                    : "the record names the folder";
      attempt.notes.push_back("optimum wrote " + std::to_string(models->size()) + " models (" +
                              JoinComma(*models) + "); " + named);
    }
    return attempt;
  }

  std::vector<std::string> base_argv_;
  Plan plan_;
};

// "openvino.convert_model (openvino_export.py)", "ovc", "optimum-cli export openvino": the
// reference's conversion_path words.
std::string ToolName(Flavor flavor, const std::filesystem::path& source) {
  std::error_code error;
  switch (flavor) {
    case Flavor::kNative:
      if (std::filesystem::is_regular_file(source / "config.json", error)) {
        return "openvino.convert_model of the transformers model (openvino_export.py)";
      }
      return std::filesystem::is_directory(source, error)
                 ? "ovc (openvino_export.py)"
                 : "openvino.convert_model (openvino_export.py)";
    case Flavor::kOptimumOpenvino:
      return "optimum-cli export openvino (openvino_export.py)";
    case Flavor::kOptimumOnnx:
      return "optimum-cli export onnx (openvino_export.py)";
  }
  return "";
}

// ONNX (any single file OpenVINO's frontends read, TorchScript aside) -> IR in convgate's own
// process tree: OpenVINO's C++ runtime does read_model + save_model (what ovc does), in a forked
// child so that the timeout holds and a crash fails one attempt. Python is not started, openvino
// not imported: the conversion costs what OpenVINO's frontend costs (tinycnn: ~0.03 s instead of
// ~1.5 s). Unset when this build has no OpenVINO runtime or the source is not such a file.
std::optional<Converter> InProcessIrConverter(const ConversionRequest& request, const Plan& plan) {
  std::error_code error;
  if (plan.flavor != Flavor::kNative || plan.int8 || !backends::OpenVinoInProcess() ||
      !std::filesystem::is_regular_file(request.source, error) ||
      IsTorchScriptFile(request.source) || IsExportedProgramFile(request.source)) {
    return std::nullopt;
  }
  Result<std::string> version = backends::OpenVinoIrWriterVersion();
  if (!version.ok()) return std::nullopt;  // the module cannot load: the Python path says why
  Converter converter;
  converter.tool = "read_model + save_model (OpenVINO C++ runtime)";
  converter.tool_version = "openvino " + *version;
  converter.display = "OpenVINO's read_model + save_model (in-process)";
  converter.layout = OutputLayout::kOpenvinoIr;
  converter.attempt = [fp16 = plan.fp16](const std::filesystem::path& source,
                                         const std::filesystem::path& out, double timeout) {
    return RunBuiltinIsolated(
        [fp16](const std::filesystem::path& src,
               const std::filesystem::path& dst) -> Result<std::vector<std::string>> {
          CONVGATE_RETURN_IF_ERROR(backends::WriteOpenVinoIr(src, dst, fp16));
          return std::vector<std::string>{fp16 ? "weights compressed to float16 (save_model)"
                                               : "float32 weights (save_model)"};
        },
        source, out, timeout);
  };
  return converter;
}

}  // namespace

Result<Converter> MakeOpenvinoConverter(const ConversionRequest& request) {
  CONVGATE_ASSIGN_OR_RETURN(Plan plan, ReadPlan(request));
  CONVGATE_RETURN_IF_ERROR(CheckSource(request.source, plan.flavor, request.kind));
  if (std::optional<Converter> in_process = InProcessIrConverter(request, plan)) {
    return std::move(in_process).value();
  }
  ResolveTask(request.source, plan);
  const std::filesystem::path script = ScriptPath();
  std::error_code error;
  if (!std::filesystem::is_regular_file(script, error)) {
    return Status::NotFound("the OpenVINO export script " + script.string() +
                            " is missing (set CONVGATE_OPENVINO_EXPORT_SCRIPT to its path)");
  }
  CONVGATE_ASSIGN_OR_RETURN(std::filesystem::path python, VenvPython());
  // What reads the source: ovc reads a SavedModel with TensorFlow (a venv without it fails here,
  // saying to run setup.sh), convert_model an ONNX or TorchScript file with torch beside it.
  std::error_code folder_error;
  const bool hf_folder =
      std::filesystem::is_regular_file(request.source / "config.json", folder_error);
  const bool saved_model = plan.flavor == Flavor::kNative && !hf_folder &&
                           std::filesystem::is_directory(request.source, folder_error);
  const std::vector<std::string> packages =
      saved_model ? std::vector<std::string>{"openvino", "tensorflow-cpu"}
      : plan.flavor == Flavor::kNative && hf_folder
          ? std::vector<std::string>{"openvino", "torch", "transformers"}
      : plan.int8 ? std::vector<std::string>{"openvino", "nncf", "torch"}
      : plan.flavor == Flavor::kNative
          ? std::vector<std::string>{"openvino", "torch"}
          : std::vector<std::string>{"optimum",      "optimum-intel", "optimum-onnx",
                                     "transformers", "openvino",      "torch"};
  CONVGATE_ASSIGN_OR_RETURN(std::string versions, PythonPackageVersions(python.string(), packages));
  CONVGATE_ASSIGN_OR_RETURN(std::string script_sha, Sha256File(script));
  Converter converter;
  converter.tool = ToolName(plan.flavor, request.source);
  converter.tool_version = versions;
  converter.display =
      converter.tool.substr(0, converter.tool.find(" (")) + " (" + script.string() + ")";
  // The resolved task too: the key must change if the rule resolving "auto" ever does.
  converter.identity =
      "script " + script_sha + "\npython " + python.string() + "\ntask " + plan.task + "\n";
  // The calibration samples decide an int8 model: their content, not the file's path.
  if (plan.int8) {
    CONVGATE_ASSIGN_OR_RETURN(std::string calibration_sha, Sha256File(plan.calibration));
    CONVGATE_ASSIGN_OR_RETURN(std::string quantize_sha,
                              Sha256File(script.parent_path() / "ort_quantize.py"));
    converter.identity +=
        "calibration sha256 " + calibration_sha + "\nsamples reader " + quantize_sha + "\n";
  }
  converter.layout =
      plan.flavor == Flavor::kNative ? OutputLayout::kOpenvinoIr : OutputLayout::kFolder;
  // An optimum-intel folder is what the hf backend runs (an OpenVINO runtime reading one .xml
  // would miss its config and, for encoder-decoders, the other half); ONNX Runtime reads one .onnx.
  if (plan.flavor == Flavor::kOptimumOnnx) {
    converter.main_file = [](const std::filesystem::path& folder) -> Result<std::string> {
      CONVGATE_ASSIGN_OR_RETURN(std::vector<std::string> models,
                                ExportModels(folder, Flavor::kOptimumOnnx));
      return models.front();
    };
  }
  converter.attempt = OpenvinoAttempt(BaseArgv(python.string(), script.string(), plan), plan);
  return converter;
}

}  // namespace convgate::convert
