// TaskOfModelType: the reference pipeline's "model-specific conversion parameters": a declared
// model type (--model-type, a manifest's model_type) picks the family of tasks an export may take,
// so a config.json without architectures or pipeline tag is not exported as the gate's default
// (text generation) when the user said it is an encoder.
#include <string>
#include <vector>

#include "convgate/graph/task.h"

namespace convgate::graph {
namespace {

struct TypeFamily {
  std::vector<std::string_view> types;  // model_type spellings, lower case
  std::string_view default_task;        // when no architecture names a task of the family
  std::vector<std::string_view> tasks;  // the tasks an architecture of the family may pick
};

// The reference's seven types (bert, t5, gpt, vit, clip, whisper, wav2vec2), with the
// transformers model_type spellings of their close relatives.
const std::vector<TypeFamily>& Families() {
  static const std::vector<TypeFamily> kFamilies = {
      {{"bert", "roberta", "distilbert", "albert", "electra", "deberta", "deberta-v2",
        "xlm-roberta", "camembert", "mpnet", "ernie"},
       "feature-extraction",
       {"feature-extraction", "fill-mask", "text-classification", "token-classification",
        "question-answering"}},
      {{"t5", "mt5", "bart", "mbart", "marian", "pegasus"},
       "text2text-generation-with-past",
       {"text2text-generation-with-past", "feature-extraction", "text-classification"}},
      {{"gpt", "gpt2", "gpt_neo", "gptj", "gpt_neox", "gpt_bigcode", "llama", "mistral", "qwen2",
        "phi", "phi3", "opt", "bloom", "falcon", "gemma"},
       "text-generation-with-past",
       {"text-generation-with-past", "text-classification", "token-classification"}},
      {{"vit", "deit", "beit", "convnext", "resnet", "swin", "mobilevit", "mobilenet_v2",
        "efficientnet", "vision"},
       "image-classification",
       {"image-classification", "feature-extraction"}},
      {{"clip", "siglip"},
       "zero-shot-image-classification",
       {"zero-shot-image-classification", "feature-extraction"}},
      {{"whisper"}, "automatic-speech-recognition-with-past", {"automatic-speech-recognition"}},
      {{"wav2vec2", "hubert", "wavlm", "data2vec-audio", "unispeech", "sew"},
       "automatic-speech-recognition",
       {"automatic-speech-recognition", "audio-classification", "feature-extraction"}},
  };
  return kFamilies;
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

bool Contains(const std::vector<std::string_view>& list, std::string_view item) {
  for (std::string_view entry : list) {
    if (entry == item) return true;
  }
  return false;
}

}  // namespace

std::optional<DetectedTask> TaskOfModelType(std::string_view model_type,
                                            const std::vector<std::string>& architectures) {
  const std::string type = Lower(model_type);
  for (const TypeFamily& family : Families()) {
    if (!Contains(family.types, type)) continue;
    const std::string declared = "declared model type " + std::string(model_type);
    for (const std::string& arch : architectures) {
      const std::string task = TaskOfArchitecture(arch);
      // Whisper's architecture says automatic-speech-recognition; its export generates.
      if (task.empty() || !Contains(family.tasks, task)) continue;
      const std::string chosen = type == "whisper" ? std::string(family.default_task) : task;
      return DetectedTask{chosen, declared + ", architecture " + arch};
    }
    return DetectedTask{
        std::string(family.default_task),
        declared +
            (architectures.empty() ? ", no architecture in config.json"
                                   : ", no architecture of that type in config.json") +
            ": the type's task"};
  }
  return std::nullopt;
}

}  // namespace convgate::graph
