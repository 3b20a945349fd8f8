#include "gate/verify_path.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "convgate/core/json_field.h"
#include "convgate/graph/task.h"

namespace convgate::gate::internal {
namespace {

namespace fs = std::filesystem;

bool HasExtension(const fs::path& source, std::initializer_list<const char*> extensions) {
  const std::string extension = source.extension().string();
  for (const char* candidate : extensions) {
    if (extension == candidate) return true;
  }
  return false;
}

const char kPathA[] = "optimum-openvino";
const char kPathB[] = "openvino";

// Whether the folder's model generates (text generation, text2text, Whisper-style speech
// recognition): the hf backend compares its greedy generation, which an IR of one forward pass
// from convert_model cannot give, so Path B is no fallback for it.
bool Generates(const fs::path& folder, std::string_view model_type) {
  const std::optional<graph::DetectedTask> task = graph::ResolveHfTask(folder, model_type);
  if (!task) return false;
  if (task->task.rfind("text-generation", 0) == 0 ||
      task->task.rfind("text2text-generation", 0) == 0) {
    return true;
  }
  if (task->task != "automatic-speech-recognition") return false;
  std::ifstream in(folder / "config.json");
  const nlohmann::json config = nlohmann::json::parse(in, nullptr, false);
  return JsonBoolOr(config, "is_encoder_decoder", false) && config.contains("num_mel_bins");
}

}  // namespace

std::vector<PathStep> ChooseVerifyPaths(const fs::path& source,
                                        std::optional<bool> optimum_supported,
                                        std::string_view model_type) {
  std::error_code error;
  const bool folder = fs::is_directory(source, error);
  if (folder && fs::is_regular_file(source / "config.json", error)) {
    const bool generates = Generates(source, model_type);
    if (optimum_supported == false) {
      return {{kPathB,
               "a Hugging Face model folder that the context says optimum does not support "
               "(optimum_supported false): Path B, convert_model of the transformers model"}};
    }
    std::vector<PathStep> steps = {
        {kPathA, "a Hugging Face model folder (config.json): Path A, optimum-cli"}};
    // A generative model has no fallback (Generates); any other is traced by convert_model.
    if (!generates) {
      steps.push_back({kPathB, "Path A failed: Path B, convert_model of the transformers model"});
    }
    return steps;
  }
  if (!folder && HasExtension(source, {".onnx"})) {
    return {{kPathB, "an ONNX file: Path B, convert_model"}};
  }
  if (!folder && HasExtension(source, {".pt", ".pth", ".ts", ".torchscript"})) {
    return {{kPathB, "a TorchScript file: Path B, convert_model"}};
  }
  if (!folder && HasExtension(source, {".pt2"})) {
    return {{kPathB, "a torch.export program (.pt2): Path B, convert_model"}};
  }
  if (HasExtension(source, {".pb"}) || (folder && fs::exists(source / "saved_model.pb", error))) {
    return {{kPathB, "a TensorFlow SavedModel: Path B, ovc"}};
  }
  std::vector<PathStep> steps;
  const std::string unclear =
      "neither a Hugging Face folder nor an ONNX, TorchScript, torch.export or "
      "TensorFlow file by its name: ";
  if (optimum_supported != false) steps.push_back({kPathA, unclear + "Path A first"});
  steps.push_back({kPathB, unclear + (steps.empty() ? "Path B" : "then Path B")});
  return steps;
}

}  // namespace convgate::gate::internal
