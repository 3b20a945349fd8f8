#include "backends/hf/hf_backend.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "backends/hf/hf_host.h"
#include "backends/runner/runner_model.h"
#include "backends/runner/runner_protocol.h"
#include "convgate/backends/hf_inputs.h"
#include "convgate/core/temp_dir.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

// Making inputs tokenizes a prompt or draws pixels: well under a second once the host runs; the
// limit only guards against a hung host.
constexpr double kInputsSeconds = 120.0;
// Unloading frees the model's memory at once; the bound only guards against a hung host.
constexpr double kUnloadSeconds = 30.0;
constexpr char kLabel[] = "the hf runner";

// What hf_runner.py says about a loaded folder (runtime/hf_tasks.py decides it): the task,
// whether it generates or runs one forward pass, the runtime and its versions.
struct Description {
  std::string task;
  std::string mode;                 // "generate" or "forward"
  std::string runtime;              // "pytorch", "openvino" or "onnxruntime"
  std::string versions;             // "transformers 4.57.6, torch 2.13.0+cpu"
  bool present_key_values = false;  // the outputs include the prompt's key/value cache
};

Result<Description> ParseDescription(const std::string& line, const fs::path& folder) {
  try {
    const nlohmann::json json = nlohmann::json::parse(line).at("description");
    Description description;
    description.task = json.at("task").get<std::string>();
    description.mode = json.at("mode").get<std::string>();
    description.runtime = json.at("runtime").get<std::string>();
    description.present_key_values = json.value("present_key_values", false);
    for (const auto& [package, version] : json.at("versions").items()) {
      description.versions +=
          (description.versions.empty() ? "" : ", ") + package + " " + version.get<std::string>();
    }
    return description;
  } catch (const std::exception& error) {
    return Status::DataLoss(folder.string() + ": " + kLabel +
                            " answered the load without a description: " + error.what());
  }
}

std::string Settings(const Description& description, int new_tokens) {
  const std::string runtime = description.runtime == "openvino"      ? "OpenVINO CPU (f32)"
                              : description.runtime == "onnxruntime" ? "ONNX Runtime CPU"
                                                                     : "PyTorch";
  std::string settings = description.task + " on " + runtime + " (" + description.versions + "), ";
  settings += description.mode == "generate"
                  ? "greedy, " + std::to_string(new_tokens) + " new tokens"
                  : "one forward pass";
  return settings;
}

// A model held by the process's hf_runner.py host (hf_host.h), under its own id: loaded once for
// every sample, loaded again when the host was restarted (a run that timed out stops it), unloaded
// when the Model goes.
class HfModel : public Model {
 public:
  static Result<std::unique_ptr<Model>> Load(const fs::path& path, const LoadOptions& options) {
    Result<TempDir> dir = TempDir::Create("hf");
    if (!dir.ok()) return dir.status().WithContext(kLabel);
    std::unique_ptr<HfModel> model(new HfModel(path, options, std::move(dir).value()));
    CONVGATE_RETURN_IF_ERROR(model->LoadInHost());
    return std::unique_ptr<Model>(std::move(model));
  }

  ~HfModel() override {
    HfHost& host = HfHost::Instance();
    if (host.generation() != generation_) return;  // that host, and the model, are gone
    (void)host.Request({{"op", "unload"}, {"id", id_}}, kUnloadSeconds, What("unloading the model"),
                       "a fixed 30 s");
  }

  const Signature& signature() const override { return signature_; }
  std::string last_log() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_log_;
  }
  std::string settings() const override { return settings_; }

  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string label = kLabel;
    const RunnerFiles files{path_, dir_.path(), label, options_.limits};
    return RunThroughRunner(files, signature_, inputs, output_names,
                            [this](const std::string& line) { return Exchange(line); });
  }

 private:
  HfModel(fs::path path, const LoadOptions& options, TempDir dir)
      : path_(std::move(path)),
        options_(options),
        dir_(std::move(dir)),
        id_(HfHost::Instance().NewModelId()) {}

  std::string What(std::string_view doing) const {
    return path_.string() + ": " + kLabel + " (" + std::string(doing) + ")";
  }

  // The host's message, prefixed with the folder unless it names it already (a timeout does,
  // and most of hf_runner.py's failures do).
  Status NamingFolder(const Status& status) const {
    if (status.message().rfind(path_.string(), 0) == 0) return status;
    return status.WithContext(path_.string());
  }

  double RunTimeout() const {
    return options_.limits.run_timeout_seconds > 0 ? options_.limits.run_timeout_seconds
                                                   : options_.timeout_seconds;
  }

  // Loads the folder in the host as id_. The signature is kept from the first load: a reload
  // reads the same folder, and the signature was handed out already.
  Status LoadInHost() {
    HfHost& host = HfHost::Instance();
    const nlohmann::json request = {{"op", "load"},
                                    {"id", id_},
                                    {"model", path_.string()},
                                    {"new_tokens", options_.new_tokens},
                                    {"present", options_.present_key_values}};
    Result<std::string> line =
        host.Request(request, options_.timeout_seconds, What("loading the model"), "--exec-timeout",
                     &generation_);
    last_log_ = host.log();
    if (!line.ok()) return NamingFolder(line.status());
    Result<RunnerHello> hello = ParseRunnerHello(*line);
    if (!hello.ok()) return hello.status().WithContext(path_.string());
    CONVGATE_ASSIGN_OR_RETURN(const Description description, ParseDescription(*line, path_));
    if (signature_.inputs.empty() && signature_.outputs.empty()) {
      signature_ = std::move(hello->signature);
    }
    settings_ = Settings(description, options_.new_tokens);
    if (description.present_key_values) settings_ += ", present key/values of the prompt";
    return Status::OK();
  }

  // One run request with this model's id. A host restarted since the load (another model's run
  // timed out) has lost the model: it is loaded again first, or when the host says it is gone.
  // REQUIRES: mutex_ held.
  Status Exchange(const std::string& line) {
    HfHost& host = HfHost::Instance();
    nlohmann::json request = nlohmann::json::parse(line);
    request["id"] = id_;
    for (int attempt = 0;; ++attempt) {
      if (host.generation() != generation_) CONVGATE_RETURN_IF_ERROR(LoadInHost());
      Result<std::string> response =
          host.Request(request, RunTimeout(), What("running a sample"), "--run-timeout");
      last_log_ = host.log();
      if (response.ok()) return Status::OK();
      if (response.status().code() != StatusCode::kNotFound || attempt > 0) {
        return NamingFolder(response.status());
      }
      generation_ = 0;  // the host lost the model: load it again
    }
  }

  fs::path path_;
  LoadOptions options_;
  TempDir dir_;  // inputs.npz and outputs.npz of each Run; removed with the Model
  uint64_t id_;
  uint64_t generation_ = 0;  // the host generation holding the model
  Signature signature_;
  std::string settings_;
  mutable std::mutex mutex_;  // serializes Run; guards last_log_
  std::string last_log_;
};

class HfBackend : public Backend {
 public:
  std::string name() const override { return "hf"; }
  std::string version() const override { return "hf_runner 3 (one host per process)"; }
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
    return HfModel::Load(model_path, options);
  }
};

}  // namespace

std::unique_ptr<Backend> CreateHfBackend() { return std::make_unique<HfBackend>(); }

Result<std::string> MakeHfInputs(const HfInputsRequest& request) {
  nlohmann::json json = {{"op", "inputs"},
                         {"model", request.folder.string()},
                         {"outputs", request.out.string()},
                         {"seed", request.seed},
                         {"samples", request.samples}};
  if (!request.prompt.empty()) json["prompt"] = request.prompt;
  Result<std::string> line = HfHost::Instance().Request(
      json, kInputsSeconds, request.folder.string() + ": " + kLabel + " (making inputs)",
      "a fixed 120 s");
  if (!line.ok()) {
    // A folder the runner cannot make inputs for is the folder's problem.
    if (line.status().code() == StatusCode::kInvalidArgument) {
      return Status::DataLoss(request.folder.string() + ": " + line.status().message());
    }
    return line.status();
  }
  try {
    return nlohmann::json::parse(*line).at("description").get<std::string>();
  } catch (const nlohmann::json::exception& error) {
    return Status::Internal("hf_runner.py inputs " + request.folder.string() +
                            " answered without a description: " + error.what());
  }
}

void WarmHfRunner(const std::vector<std::string>& runtimes) { HfHost::Instance().Warm(runtimes); }

bool IsHfModelFolder(const std::filesystem::path& path) {
  std::error_code error;
  return fs::is_directory(path, error) && fs::is_regular_file(path / "config.json", error);
}

}  // namespace convgate::backends
