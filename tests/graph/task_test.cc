#include "convgate/graph/task.h"

#include <gtest/gtest.h>

#include <fstream>

#include "graph/onnx_test_util.h"
#include "testing/tensor_info.h"

namespace convgate::graph {
namespace {

const auto Info = testing::Declared;

const Dim kBatch = Dim::Symbolic("batch");

TEST(DetectTask, ImageClassifier) {
  Signature signature;
  signature.inputs = {
      Info("image", DType::kFloat32, {kBatch, Dim::Fixed(3), Dim::Fixed(224), Dim::Fixed(224)})};
  signature.outputs = {Info("logits", DType::kFloat32, {kBatch, Dim::Fixed(1000)})};
  auto task = DetectTask(signature, {{"Conv", 20}, {"Gemm", 1}});
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->task, "image-classification");
  EXPECT_NE(task->evidence.find("'image' float32[batch, 3, 224, 224]"), std::string::npos)
      << task->evidence;
  // Without a convolution, a rank-4 input is not conclusive.
  EXPECT_FALSE(DetectTask(signature, {{"Gemm", 1}}).has_value());
}

TEST(DetectTask, TextModels) {
  Signature signature;
  signature.inputs = {Info("input_ids", DType::kInt64, {kBatch, Dim::Symbolic("seq")})};
  signature.outputs = {Info("logits", DType::kFloat32, {kBatch, Dim::Fixed(2)})};
  EXPECT_EQ(DetectTask(signature, {})->task, "text-classification");
  signature.outputs = {
      Info("last_hidden_state", DType::kFloat32, {kBatch, Dim::Symbolic("seq"), Dim::Fixed(768)})};
  EXPECT_EQ(DetectTask(signature, {})->task, "feature-extraction");
}

TEST(DetectTask, TabularClassifier) {
  Signature signature;
  signature.inputs = {Info("X", DType::kFloat32, {kBatch, Dim::Fixed(4)})};
  signature.outputs = {Info("label", DType::kInt64, {kBatch}),
                       Info("probabilities", DType::kFloat32, {kBatch, Dim::Fixed(3)})};
  EXPECT_EQ(DetectTask(signature, {})->task, "tabular-classification");
}

TEST(DetectTask, NothingConclusiveIsNull) {
  Signature signature;
  signature.inputs = {Info("x", DType::kFloat32, {kBatch, Dim::Fixed(8)})};
  signature.outputs = {Info("y", DType::kFloat32, {kBatch, Dim::Fixed(8)})};
  EXPECT_FALSE(DetectTask(signature, {{"Gemm", 2}}).has_value());
  EXPECT_FALSE(DetectTask(Signature{}, {}).has_value());
}

}  // namespace
}  // namespace convgate::graph

namespace convgate::graph {
namespace {

class HfTaskTest : public ::testing::Test {
 protected:
  // A folder whose config.json is `config`.
  std::filesystem::path Folder(const std::string& config) {
    std::ofstream(dir_.path() / "config.json") << config;
    return dir_.path();
  }
  std::string TaskOf(const std::string& config) {
    std::optional<DetectedTask> task = ResolveHfTask(Folder(config));
    return task ? task->task : "(none)";
  }
  convgate::testing::ScopedTempDir dir_;
};

// The gate's order: pipeline tag (mapped), then the encoder-decoder model types, then (where the
// gate would fall back to text generation) the architecture, then text generation.
TEST_F(HfTaskTest, FollowsTheGatesRuleThenTheArchitecture) {
  EXPECT_EQ(TaskOf(R"({"pipeline_tag": "text-generation", "model_type": "t5"})"),
            "text-generation-with-past");
  EXPECT_EQ(TaskOf(R"({"pipeline_tag": "image-segmentation"})"), "image-segmentation");
  for (const char* type : {"t5", "mt5", "bart", "mbart"}) {
    EXPECT_EQ(TaskOf(std::string(R"({"model_type": ")") + type + R"("})"),
              "text2text-generation-with-past")
        << type;
  }
  EXPECT_EQ(TaskOf(R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]})"),
            "text-generation-with-past");
  EXPECT_EQ(TaskOf(R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"]})"),
            "text-generation-with-past");
  EXPECT_EQ(TaskOf(R"({"model_type": "bert", "architectures": ["BertForMaskedLM"]})"), "fill-mask");
  EXPECT_EQ(TaskOf(R"({"model_type": "bert", "architectures": ["BertModel"]})"),
            "feature-extraction");
  EXPECT_EQ(TaskOf(R"({"model_type": "vit", "architectures": ["ViTForImageClassification"]})"),
            "image-classification");
  EXPECT_EQ(TaskOf(R"({"architectures": ["WhisperForConditionalGeneration"]})"),
            "automatic-speech-recognition");
  EXPECT_EQ(TaskOf(R"({"architectures": ["Wav2Vec2ForCTC"]})"), "automatic-speech-recognition");
  // A speech encoder's sequence classifier classifies audio, not text.
  for (const char* arch :
       {"Data2VecAudioForSequenceClassification", "HubertForSequenceClassification",
        "Wav2Vec2ForSequenceClassification"}) {
    EXPECT_EQ(TaskOf(std::string(R"({"architectures": [")") + arch + R"("]})"),
              "audio-classification")
        << arch;
  }
  EXPECT_EQ(TaskOf(R"({"architectures": ["BertForSequenceClassification"]})"),
            "text-classification");
  EXPECT_EQ(TaskOf(R"({"architectures": ["CLIPModel"]})"), "zero-shot-image-classification");
  EXPECT_EQ(TaskOf(R"({"model_type": "mystery"})"), "text-generation-with-past");
}

TEST_F(HfTaskTest, EvidenceSaysWhichRuleDecided) {
  std::optional<DetectedTask> task =
      ResolveHfTask(Folder(R"({"model_type": "bert", "architectures": ["BertForMaskedLM"]})"));
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->evidence, "config.json: model_type bert, architecture BertForMaskedLM");
}

// The reference pipeline's model-specific conversion settings: a declared type steers the task,
// before the config's pipeline tag and model type; an architecture of the type's family picks
// its own task; a type of no family leaves the config's rule deciding, and says so.
TEST_F(HfTaskTest, ADeclaredModelTypeSteersTheTask) {
  const auto declared = [&](const std::string& config, std::string_view type) {
    std::optional<DetectedTask> task = ResolveHfTask(Folder(config), type);
    return task ? task->task + " | " + task->evidence : "(none)";
  };
  // No architectures: the config's rule says text generation; bert says feature-extraction.
  EXPECT_EQ(declared(R"({"model_type": "bert"})", "bert"),
            "feature-extraction | declared model type bert, no architecture in config.json: the "
            "type's task");
  EXPECT_EQ(TaskOf(R"({"model_type": "bert"})"), "text-generation-with-past");
  EXPECT_EQ(
      declared(R"({"model_type": "bert", "architectures": ["BertForSequenceClassification"]})",
               "bert"),
      "text-classification | declared model type bert, architecture "
      "BertForSequenceClassification");
  // An architecture outside the family does not decide; the declared type's task does, and the
  // config's other type is named.
  EXPECT_EQ(declared(R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]})", "BERT"),
            "feature-extraction | declared model type BERT, no architecture of that type in "
            "config.json: the type's task (config.json says model_type gpt2)");
  EXPECT_EQ(declared(R"({"pipeline_tag": "fill-mask"})", "t5"),
            "text2text-generation-with-past | declared model type t5, no architecture in "
            "config.json: the type's task");
  for (const auto& [type, task] : std::vector<std::pair<std::string, std::string>>{
           {"gpt", "text-generation-with-past"},
           {"vit", "image-classification"},
           {"clip", "zero-shot-image-classification"},
           {"whisper", "automatic-speech-recognition-with-past"},
           {"wav2vec2", "automatic-speech-recognition"}}) {
    std::optional<DetectedTask> found = ResolveHfTask(Folder("{}"), type);
    ASSERT_TRUE(found.has_value()) << type;
    EXPECT_EQ(found->task, task) << type;
  }
  EXPECT_EQ(declared(R"({"architectures": ["WhisperForConditionalGeneration"]})", "whisper"),
            "automatic-speech-recognition-with-past | declared model type whisper, architecture "
            "WhisperForConditionalGeneration");
  EXPECT_EQ(declared(R"({"architectures": ["Wav2Vec2ForSequenceClassification"]})", "wav2vec2"),
            "audio-classification | declared model type wav2vec2, architecture "
            "Wav2Vec2ForSequenceClassification");
  EXPECT_EQ(declared(R"({"model_type": "bert", "architectures": ["BertForMaskedLM"]})", "cnn"),
            "fill-mask | declared model type cnn has no conversion settings, so config.json: "
            "model_type bert, architecture BertForMaskedLM");
  EXPECT_FALSE(TaskOfModelType("cnn", {}).has_value());
  for (const char* type : {"roberta", "mt5", "llama", "deit", "siglip", "hubert"}) {
    EXPECT_TRUE(TaskOfModelType(type, {}).has_value()) << type;
  }
}

TEST_F(HfTaskTest, NoReadableConfigIsNoTask) {
  EXPECT_FALSE(ResolveHfTask(dir_.path()).has_value());
  EXPECT_FALSE(ResolveHfTask(Folder("not json")).has_value());
  EXPECT_FALSE(ResolveHfTask(Folder("[1, 2]")).has_value());
}

}  // namespace
}  // namespace convgate::graph
