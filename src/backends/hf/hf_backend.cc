#include "backends/hf/hf_backend.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "backends/exec/exec_protocol.h"
#include "backends/runner/runner_model.h"
#include "convgate/backends/hf_inputs.h"
#include "convgate/core/python_env.h"
#include "convgate/core/subprocess.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

// Reading config.json and the installed versions takes ~0.1 s; the limit only guards against a
// hung interpreter.
constexpr double kDescribeSeconds = 120.0;

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

fs::path RunnerScript() {
  return EnvOr("CONVGATE_HF_RUNNER", std::string(CONVGATE_SOURCE_DIR) + "/scripts/hf_runner.py");
}

TensorInfo Declared(std::string name, DType dtype, std::vector<Dim> shape) {
  TensorInfo info;
  info.name = std::move(name);
  info.dtype = dtype;
  info.type_name = std::string(DTypeName(dtype));
  info.has_shape = true;
  info.shape = std::move(shape);
  return info;
}

// One port of hf_runner.py's description: {"name", "type", "shape": [1, "sequence", 171]}, a
// string in the shape naming a symbolic dim.
TensorInfo ParsePort(const nlohmann::json& port) {
  const std::string type = port.at("type").get<std::string>();
  const std::optional<DType> dtype = ParseDType(type);
  if (!dtype) throw std::invalid_argument("port type '" + type + "' is no dtype");
  std::vector<Dim> shape;
  for (const nlohmann::json& dim : port.at("shape")) {
    shape.push_back(dim.is_string() ? Dim::Symbolic(dim.get<std::string>())
                                    : Dim::Fixed(dim.get<int64_t>()));
  }
  return Declared(port.at("name").get<std::string>(), *dtype, std::move(shape));
}

// What hf_runner.py describe says about the folder (scripts/hf_tasks.py decides it): the task,
// whether it generates or runs one forward pass, and the ports it declares.
struct Description {
  std::string task;
  std::string mode;      // "generate" or "forward"
  std::string runtime;   // "pytorch", "openvino" or "onnxruntime"
  std::string versions;  // "transformers 4.57.6, torch 2.13.0+cpu"
  Signature signature;
};

Result<Description> Describe(const fs::path& python, const fs::path& folder) {
  SubprocessOptions options;
  options.timeout_seconds = kDescribeSeconds;
  Result<SubprocessResult> run = RunSubprocess(
      {python.string(), RunnerScript().string(), "describe", folder.string()}, options);
  if (!run.ok()) return run.status().WithContext(folder.string());
  if (!run->succeeded()) {
    return CommandFailure(*run, "hf_runner.py describe " + folder.string());
  }
  try {
    const nlohmann::json json = nlohmann::json::parse(TailLines(run->stdout_tail, 1));
    Description description;
    description.task = json.at("task").get<std::string>();
    description.mode = json.at("mode").get<std::string>();
    description.runtime = json.at("runtime").get<std::string>();
    for (const auto& [package, version] : json.at("versions").items()) {
      description.versions +=
          (description.versions.empty() ? "" : ", ") + package + " " + version.get<std::string>();
    }
    for (const nlohmann::json& port : json.at("inputs")) {
      description.signature.inputs.push_back(ParsePort(port));
    }
    for (const nlohmann::json& port : json.at("outputs")) {
      description.signature.outputs.push_back(ParsePort(port));
    }
    return description;
  } catch (const std::exception& error) {
    return Status::Internal("hf_runner.py describe " + folder.string() +
                            " printed no description: " + error.what());
  }
}

// The persistent runner's model (hf_runner.py serve: the model loaded once for every sample), with
// the signature hf_runner.py describe declared (named dimension symbols) and what ran.
class HfModel : public Model {
 public:
  HfModel(std::unique_ptr<Model> runner, Signature signature, std::string settings)
      : runner_(std::move(runner)),
        signature_(std::move(signature)),
        settings_(std::move(settings)) {}

  const Signature& signature() const override { return signature_; }
  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override {
    return runner_->Run(inputs, output_names);
  }
  std::string last_log() const override { return runner_->last_log(); }
  std::string settings() const override { return settings_; }

 private:
  std::unique_ptr<Model> runner_;
  Signature signature_;
  std::string settings_;
};

class HfBackend : public Backend {
 public:
  std::string name() const override { return "hf"; }
  std::string version() const override { return "hf_runner 2 (persistent)"; }
  bool SupportsIntermediates() const override { return false; }

  Result<std::unique_ptr<Model>> Load(const fs::path& model_path,
                                      const LoadOptions& options) override {
    std::error_code error;
    if (!fs::is_directory(model_path, error)) {
      return Status::NotFound(model_path.string() +
                              ": the hf backend runs Hugging Face model folders (config.json and "
                              "weights), and this is no folder");
    }
    if (!IsHfModelFolder(model_path)) {
      return Status::NotFound(model_path.string() +
                              " has no config.json: not a Hugging Face "
                              "model folder");
    }
    if (options.new_tokens < 1) {
      return Status::InvalidArgument("new_tokens must be >= 1, got " +
                                     std::to_string(options.new_tokens));
    }
    CONVGATE_ASSIGN_OR_RETURN(const fs::path python, VenvPython());
    CONVGATE_ASSIGN_OR_RETURN(const Description description, Describe(python, model_path));
    RunnerSpec spec;
    spec.argv = {python.string(),     RunnerScript().string(), "serve",
                 model_path.string(), "--new-tokens",          std::to_string(options.new_tokens)};
    spec.label = "the hf runner (hf_runner.py serve)";
    spec.temp_prefix = "hf";
    CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<RunnerModel> runner,
                              RunnerModel::Load(model_path, std::move(spec), options));
    const std::string runtime = description.runtime == "openvino"      ? "OpenVINO CPU (f32)"
                                : description.runtime == "onnxruntime" ? "ONNX Runtime CPU"
                                                                       : "PyTorch";
    std::string settings =
        description.task + " on " + runtime + " (" + description.versions + "), ";
    settings += description.mode == "generate"
                    ? "greedy, " + std::to_string(options.new_tokens) + " new tokens"
                    : "one forward pass";
    return std::unique_ptr<Model>(
        new HfModel(std::move(runner), std::move(description.signature), settings));
  }
};

}  // namespace

std::unique_ptr<Backend> CreateHfBackend() { return std::make_unique<HfBackend>(); }

Result<std::string> MakeHfInputs(const HfInputsRequest& request) {
  CONVGATE_ASSIGN_OR_RETURN(const fs::path python, VenvPython());
  std::vector<std::string> argv = {python.string(),
                                   RunnerScript().string(),
                                   "inputs",
                                   request.folder.string(),
                                   request.out.string(),
                                   "--seed",
                                   std::to_string(request.seed),
                                   "--samples",
                                   std::to_string(request.samples)};
  if (!request.prompt.empty()) {
    argv.push_back("--prompt");
    argv.push_back(request.prompt);
  }
  SubprocessOptions options;
  options.timeout_seconds = kDescribeSeconds;
  Result<SubprocessResult> run = RunSubprocess(argv, options);
  if (!run.ok()) return run.status().WithContext(request.folder.string());
  if (!run->succeeded()) {
    return CommandFailure(*run, "hf_runner.py inputs " + request.folder.string());
  }
  try {
    const nlohmann::json json = nlohmann::json::parse(TailLines(run->stdout_tail, 1));
    return json.at("description").get<std::string>();
  } catch (const nlohmann::json::exception& error) {
    return Status::Internal("hf_runner.py inputs " + request.folder.string() +
                            " printed no description: " + error.what());
  }
}

bool IsHfModelFolder(const std::filesystem::path& path) {
  std::error_code error;
  return fs::is_directory(path, error) && fs::is_regular_file(path / "config.json", error);
}

}  // namespace convgate::backends
