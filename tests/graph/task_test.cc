#include "convgate/graph/task.h"

#include <gtest/gtest.h>

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
