// graph/input_hints.h through SummarizeOnnxModel: what the graph shows about an input's values.
#include <gtest/gtest.h>

#include <string>

#include "convgate/core/file_util.h"
#include "convgate/graph/onnx_model.h"
#include "graph/onnx_test_util.h"

namespace convgate::graph {
namespace {

using ::convgate::testing::ParseOnnxText;
using ::convgate::testing::ScopedTempDir;
using ::convgate::testing::WriteModel;

std::string Zeros(int count) {
  std::string text;
  for (int k = 0; k < count; ++k) text += k ? ", 0" : "0";
  return text;
}

// Token ids reach an embedding table of 10 rows through a Cast, the type ids one of 2 rows
// directly; the mask is a mask by its name; the image's symbolic channel dim is what its Conv
// (grouped: 2 groups of 3) takes; an input reaching nothing gets no hint.
Signature HintedSignature() {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (int64[batch, seq] input_ids, int64[batch, seq] token_type_ids, int64[batch, seq] attention_mask,
   float[batch, channels, 8, 8] pixels, int64[batch] other)
  => (float[batch, seq, 4] e, float[batch, seq, 4] t, float[batch, 4, 6, 6] f, int64[batch] o)
  <float[10, 4] table = {)" +
                           Zeros(40) + R"(}, float[2, 4] types = {)" + Zeros(8) +
                           R"(}, float[4, 3, 3, 3] w = {)" + Zeros(108) + R"(}>
{
  ids32 = Cast <to = 6> (input_ids)
  e = Gather(table, ids32)
  t = Gather(types, token_type_ids)
  f = Conv <group = 2> (pixels, w)
  o = Identity(other)
}
)";
  ScopedTempDir dir;
  const std::filesystem::path path = dir.path() / "hints.onnx";
  WriteModel(ParseOnnxText(text), path);
  Result<ModelSummary> summary = SummarizeOnnxModelStructure(path);
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  return summary.ok() ? summary->signature : Signature();
}

TEST(InputHints, IdsIndexTheirTableMasksAreMasksChannelsComeFromTheConv) {
  const Signature signature = HintedSignature();
  ASSERT_EQ(signature.inputs.size(), 5u);
  const InputHint& ids = signature.inputs[0].hint;
  EXPECT_EQ(ids.index_rows, 10);
  EXPECT_NE(ids.index_source.find("on 'table' (10 rows)"), std::string::npos) << ids.index_source;
  EXPECT_EQ(signature.inputs[1].hint.index_rows, 2);
  EXPECT_TRUE(signature.inputs[2].hint.mask);
  EXPECT_EQ(signature.inputs[2].hint.index_rows, 0);
  const InputHint& pixels = signature.inputs[3].hint;
  EXPECT_EQ(pixels.channels, 6);
  EXPECT_NE(pixels.channels_source.find("weight 'w' [4, 3, 3, 3]"), std::string::npos)
      << pixels.channels_source;
  const InputHint& other = signature.inputs[4].hint;
  EXPECT_EQ(other.index_rows, 0);
  EXPECT_FALSE(other.mask);
}

// An optimum export's folder: config.json's image_size (nested in vision_config, as CLIP's is)
// and num_channels give pixel_values' symbolic dims; preprocessor_config.json's sampling_rate
// gives input_values one second. Fixed dims and a folder without config.json get nothing.
TEST(InputHints, ConfigBesideTheModelGivesSymbolicDimsTheirSizes) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch, num_channels, height, width] pixel_values, float[batch, samples] input_values,
   float[batch, 3, 16, 16] fixed)
  => (float[batch, num_channels, height, width] a, float[batch, samples] b, float[batch, 3, 16, 16] c)
{
  a = Identity(pixel_values)
  b = Identity(input_values)
  c = Identity(fixed)
}
)";
  ScopedTempDir dir;
  const std::filesystem::path path = dir.path() / "model.onnx";
  WriteModel(ParseOnnxText(text), path);
  Result<ModelSummary> bare = SummarizeOnnxModelStructure(path);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  for (const TensorInfo& input : bare->signature.inputs)
    EXPECT_TRUE(input.hint.dim_defaults.empty());

  ASSERT_TRUE(
      WriteFileAtomic(
          dir.path() / "config.json",
          R"({"model_type": "clip", "vision_config": {"image_size": [24, 32], "num_channels": 3}})")
          .ok());
  ASSERT_TRUE(
      WriteFileAtomic(dir.path() / "preprocessor_config.json", R"({"sampling_rate": 16000})").ok());
  Result<ModelSummary> summary = SummarizeOnnxModelStructure(path);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const auto& pixels = summary->signature.inputs[0].hint.dim_defaults;
  ASSERT_EQ(pixels.size(), 3u);
  EXPECT_EQ(pixels[0].axis, 1u);
  EXPECT_EQ(pixels[0].value, 3);
  EXPECT_EQ(pixels[1].axis, 2u);
  EXPECT_EQ(pixels[1].value, 24);
  EXPECT_EQ(pixels[2].axis, 3u);
  EXPECT_EQ(pixels[2].value, 32);
  EXPECT_EQ(pixels[1].source, "config.json beside the model: vision_config.image_size 24");
  const auto& audio = summary->signature.inputs[1].hint.dim_defaults;
  ASSERT_EQ(audio.size(), 1u);
  EXPECT_EQ(audio[0].value, 16000);
  EXPECT_TRUE(summary->signature.inputs[2].hint.dim_defaults.empty());

  ASSERT_TRUE(WriteFileAtomic(dir.path() / "config.json", "{not json").ok());
  Result<ModelSummary> broken = SummarizeOnnxModelStructure(path);
  ASSERT_TRUE(broken.ok()) << broken.status().ToString();
  EXPECT_TRUE(broken->signature.inputs[0].hint.dim_defaults.empty());
}

}  // namespace
}  // namespace convgate::graph
