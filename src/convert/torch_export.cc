// `--to onnx`: PyTorch -> ONNX with torch.onnx.export, through runtime/torch_export.py run by
// Debian's python3 (python3-torch, python3-torchvision), from a TorchScript file or from a
// torchvision architecture name (seeded random weights and BatchNorm statistics); a torch.export
// program (.pt2) instead goes through the project's venv python, whose torch and onnxscript have
// torch.onnx.export(dynamo=True) (Debian's torch 1.13 predates torch.export).
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "convert/converter.h"
#include "convert/retry.h"
#include "convgate/core/file_util.h"
#include "convgate/core/install_layout.h"
#include "convgate/core/json_field.h"
#include "convgate/core/python_env.h"
#include "convgate/io/file_format.h"

namespace convgate::convert {
namespace {

// Debian's interpreter, which has python3-torch; a python3 earlier on PATH (pyenv) may not.
constexpr char kDefaultPython[] = "/usr/bin/python3";
std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

std::filesystem::path ScriptPath() {
  return RuntimeScript("torch_export.py", "CONVGATE_TORCH_EXPORT_SCRIPT");
}

Result<std::string> TorchVersions(const std::string& python) {
  Result<std::string> versions = PythonPackageVersions(python, {"torch", "torchvision"});
  if (versions.status().code() == StatusCode::kNotFound) {
    return Status::NotFound(
        "PyTorch export needs python3-torch and python3-torchvision for " + python +
        " (apt-get install python3-torch python3-torchvision): " + versions.status().message());
  }
  return versions;
}

Status CheckParams(const Params& params, bool exported_program) {
  constexpr std::string_view kKind = "onnx";
  CONVGATE_RETURN_IF_ERROR(IntParam(params, "opset", kKind).status());
  CONVGATE_RETURN_IF_ERROR(IntParam(params, "seed", kKind).status());
  if (exported_program) {
    for (const auto& [param, value] : params) {
      if (param != "opset") {
        return Status::InvalidArgument(
            "parameter " + param + "='" + value +
            "' for --to onnx of a torch.export program: the program carries its own inputs, "
            "outputs and dynamic dims; only opset=N applies");
      }
    }
  }
  auto axes = params.find("dynamic_axes");
  if (axes != params.end() && axes->second != "batch" && axes->second != "none") {
    return Status::InvalidArgument("parameter dynamic_axes='" + axes->second +
                                   "' for --to onnx: torch_export.py supports 'batch' (dim 0 of "
                                   "every input and output) or 'none'");
  }
  return Status::OK();
}

// The script's command line, with {src} and {out} left for the attempt to fill in.
std::vector<std::string> ScriptArgv(const std::string& python, const std::string& script,
                                    const Params& params, bool exported_program) {
  std::vector<std::string> argv = {python, script};
  if (exported_program) {
    argv.insert(argv.end(), {"--from-exported-program", "{src}"});
  } else if (auto arch = params.find("arch"); arch != params.end()) {
    argv.insert(argv.end(), {"--model", arch->second});
  } else {
    argv.insert(argv.end(), {"--from-torchscript", "{src}"});
  }
  argv.insert(argv.end(), {"--to-onnx", "{out}"});
  for (const auto& [param, flag] : {std::pair{"opset", "--opset"},
                                    {"seed", "--seed"},
                                    {"input_names", "--input-names"},
                                    {"output_names", "--output-names"}}) {
    if (auto found = params.find(param); found != params.end()) {
      argv.insert(argv.end(), {flag, found->second});
    }
  }
  for (const auto& [param, flag] :
       {std::pair{"input_shape", "--input-shape"}, {"input_dtype", "--input-dtype"}}) {
    if (auto found = params.find(param); found != params.end()) {
      for (const std::string& item : SplitList(found->second))
        argv.insert(argv.end(), {flag, item});
    }
  }
  if (auto axes = params.find("dynamic_axes"); axes != params.end() && axes->second == "batch") {
    argv.push_back("--dynamic-batch");
  }
  return argv;
}

std::string Substitute(const std::string& arg, const std::filesystem::path& source,
                       const std::filesystem::path& out) {
  if (arg == "{src}") return source.string();
  if (arg == "{out}") return out.string();
  return arg;
}

AttemptResult RunScript(const std::vector<std::string>& argv_template,
                        const std::filesystem::path& source, const std::filesystem::path& out,
                        double timeout_seconds) {
  std::vector<std::string> argv;
  for (const std::string& arg : argv_template) argv.push_back(Substitute(arg, source, out));
  SubprocessResult run;
  AttemptResult attempt = RunConversionScript(argv, timeout_seconds, &run);
  if (!attempt.ok()) return attempt;
  // The script's last stdout line is a JSON record naming the torch that exported.
  nlohmann::json record = nlohmann::json::parse(TailLines(run.stdout_tail, 1), nullptr, false);
  if (record.is_object() && record.contains("torch_version")) {
    const bool dynamo = record.contains("onnxscript_version");
    attempt.tool_version =
        "torch " + JsonTextOr(record, "torch_version", "") +
        (dynamo ? ", onnxscript " + JsonTextOr(record, "onnxscript_version", "")
                : ", torchvision " + JsonTextOr(record, "torchvision_version", ""));
  }
  return attempt;
}

}  // namespace

// A SOURCE the export cannot take is a usage error before Python starts: an ONNX model given
// to --to onnx (a new user's first guess) used to fail inside torch.load with "PytorchStreamReader
// failed reading zip archive". PyTorch's formats are zips or pickles; anything else is refused
// with what it looks like. A file that cannot be read is left to the conversion's own checks.
Status CheckSourceFormat(const std::filesystem::path& source) {
  Result<io::SniffedFile> sniffed = io::SniffFile(source);
  if (!sniffed.ok()) return Status::OK();
  switch (sniffed->format) {
    case io::FileFormat::kTorchScript:
    case io::FileFormat::kPyTorchZip:
    case io::FileFormat::kPyTorchLegacy:
    case io::FileFormat::kPickle:
    case io::FileFormat::kZip:  // a torch.export program (.pt2) is a zip too
      return Status::OK();
    case io::FileFormat::kOther:
      return Status::InvalidArgument(
          "--to onnx exports a PyTorch model (a TorchScript file, a torch.export .pt2, or "
          "torchvision:NAME) to ONNX; " +
          source.string() +
          " is not one (an ONNX model is already ONNX: --to opset:N changes its opset, and "
          "--target OTHER.onnx compares it with another file)");
    default:
      return Status::InvalidArgument(
          "--to onnx exports a PyTorch model (a TorchScript file, a torch.export .pt2, or "
          "torchvision:NAME) to ONNX; " +
          source.string() + " is " + std::string(io::FileFormatName(sniffed->format)));
  }
}

Result<Converter> MakeTorchExportConverter(const ConversionRequest& request) {
  const bool exported_program = IsExportedProgramFile(request.source);
  CONVGATE_RETURN_IF_ERROR(CheckParams(request.params, exported_program));
  if (!request.source.empty()) CONVGATE_RETURN_IF_ERROR(CheckSourceFormat(request.source));
  const bool from_arch = request.params.count("arch") > 0;
  if (from_arch == !request.source.empty()) {
    return Status::InvalidArgument(
        "--to onnx converts a TorchScript file (SOURCE) or a torchvision architecture "
        "(SOURCE torchvision:NAME, or arch=NAME): give exactly one");
  }
  const std::filesystem::path script = ScriptPath();
  std::error_code error;
  if (!std::filesystem::is_regular_file(script, error)) {
    return Status::NotFound("the PyTorch export script " + script.string() +
                            " is missing (set CONVGATE_TORCH_EXPORT_SCRIPT to its path)");
  }
  std::string python;
  std::string versions;
  if (exported_program) {
    Result<std::filesystem::path> venv = VenvPython();
    if (!venv.ok()) return venv.status().WithContext("--to onnx of a torch.export program");
    python = venv->string();
    CONVGATE_ASSIGN_OR_RETURN(versions, PythonPackageVersions(python, {"torch", "onnxscript"}));
  } else {
    python = EnvOr("CONVGATE_PYTHON", kDefaultPython);
    CONVGATE_ASSIGN_OR_RETURN(versions, TorchVersions(python));
  }
  CONVGATE_ASSIGN_OR_RETURN(std::string script_sha, Sha256File(script));
  const std::vector<std::string> argv =
      ScriptArgv(python, script.string(), request.params, exported_program);
  Converter converter;
  converter.tool = exported_program ? "torch.onnx.export(dynamo=True) (torch_export.py)"
                                    : "torch.onnx.export (torch_export.py)";
  converter.tool_version = versions;
  converter.display = "torch.onnx.export (" + script.string() + ")";
  converter.identity = "script " + script_sha + "\npython " + python + "\n";
  converter.source_is_file = !from_arch;
  converter.attempt = [argv](const std::filesystem::path& source, const std::filesystem::path& out,
                             double timeout) { return RunScript(argv, source, out, timeout); };
  return converter;
}

}  // namespace convgate::convert
