// ResolveHfTask: the optimum export task of a Hugging Face model folder, by the verify-conversion
// gate's rule (docs/openvino.md), refined by the architecture
// where the seed's fallback would name a task the model cannot do.
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "convgate/core/json_field.h"
#include "convgate/graph/task.h"

namespace convgate::graph {
namespace {

// The seed's PIPELINE_TAG_MAP: a pipeline tag -> optimum's task.
const std::map<std::string, std::string>& PipelineTagMap() {
  static const std::map<std::string, std::string> kMap = {
      {"text-generation", "text-generation-with-past"},
      {"text2text-generation", "text2text-generation-with-past"},
      {"image-text-to-text", "image-text-to-text"},
      {"text-classification", "text-classification"},
      {"token-classification", "token-classification"},
      {"question-answering", "question-answering"},
      {"feature-extraction", "feature-extraction"},
      {"fill-mask", "fill-mask"},
      {"text-to-image", "text-to-image"},
      {"image-to-text", "image-to-text"},
      {"automatic-speech-recognition", "automatic-speech-recognition"},
      {"audio-classification", "audio-classification"},
  };
  return kMap;
}

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.ends_with(suffix);
}

// The wav2vec2 family: its ...ForSequenceClassification classifies audio (runtime/hf_tasks.py
// keeps the same list).
bool IsSpeechEncoder(const std::string& arch) {
  for (std::string_view family :
       {"Wav2Vec2", "Hubert", "Data2VecAudio", "WavLM", "UniSpeech", "SEW"}) {
    if (arch.starts_with(family)) return true;
  }
  return false;
}

}  // namespace

std::string TaskOfArchitecture(const std::string& arch) {
  if (EndsWith(arch, "ForCausalLM") || EndsWith(arch, "LMHeadModel")) {
    return "text-generation-with-past";
  }
  if (EndsWith(arch, "ForSpeechSeq2Seq") || EndsWith(arch, "ForCTC") ||
      arch == "WhisperForConditionalGeneration") {
    return "automatic-speech-recognition";
  }
  if (EndsWith(arch, "ForConditionalGeneration")) return "text2text-generation-with-past";
  if (EndsWith(arch, "ForMaskedLM")) return "fill-mask";
  if (EndsWith(arch, "ForSequenceClassification")) {
    return IsSpeechEncoder(arch) ? "audio-classification" : "text-classification";
  }
  if (EndsWith(arch, "ForTokenClassification")) return "token-classification";
  if (EndsWith(arch, "ForQuestionAnswering")) return "question-answering";
  if (EndsWith(arch, "ForImageClassification")) return "image-classification";
  if (EndsWith(arch, "ForAudioClassification")) return "audio-classification";
  if (arch == "CLIPModel") return "zero-shot-image-classification";
  if (EndsWith(arch, "Model")) return "feature-extraction";  // a bare encoder: BertModel, ViTModel
  return "";
}

namespace {

std::vector<std::string> ArchitecturesOf(const nlohmann::json& config) {
  std::vector<std::string> names;
  auto architectures = config.find("architectures");
  if (architectures == config.end() || !architectures->is_array()) return names;
  for (const nlohmann::json& arch : *architectures) {
    if (arch.is_string()) names.push_back(arch.get<std::string>());
  }
  return names;
}

// The rule without a declared type.
DetectedTask TaskOfConfig(const nlohmann::json& config) {
  const auto text = [&](const char* key) { return JsonTextOr(config, key, ""); };
  const std::string tag = text("pipeline_tag");
  if (!tag.empty()) {
    auto mapped = PipelineTagMap().find(tag);
    return DetectedTask{mapped == PipelineTagMap().end() ? tag : mapped->second,
                        "config.json: pipeline_tag " + tag};
  }
  const std::string model_type = text("model_type");
  if (model_type == "t5" || model_type == "mt5" || model_type == "bart" || model_type == "mbart") {
    return DetectedTask{"text2text-generation-with-past",
                        "config.json: model_type " + model_type + " (encoder-decoder)"};
  }
  for (const std::string& arch : ArchitecturesOf(config)) {
    const std::string task = TaskOfArchitecture(arch);
    if (task.empty()) continue;
    return DetectedTask{task, "config.json: model_type " + model_type + ", architecture " + arch};
  }
  return DetectedTask{"text-generation-with-past",
                      "config.json: model_type " + (model_type.empty() ? "(none)" : model_type) +
                          ", no pipeline_tag or known architecture (the gate's default)"};
}

}  // namespace

std::optional<DetectedTask> ResolveHfTask(const std::filesystem::path& folder,
                                          std::string_view declared_type) {
  std::ifstream in(folder / "config.json");
  if (!in) return std::nullopt;
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  if (!config.is_object()) return std::nullopt;
  if (declared_type.empty()) return TaskOfConfig(config);
  const std::string config_type = JsonTextOr(config, "model_type", "");
  const std::string differs = config_type.empty() || config_type == declared_type
                                  ? ""
                                  : " (config.json says model_type " + config_type + ")";
  if (std::optional<DetectedTask> task = TaskOfModelType(declared_type, ArchitecturesOf(config))) {
    task->evidence += differs;
    return task;
  }
  DetectedTask task = TaskOfConfig(config);
  task.evidence = "declared model type " + std::string(declared_type) +
                  " has no conversion settings, so " + task.evidence;
  return task;
}

}  // namespace convgate::graph
