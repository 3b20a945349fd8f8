#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "convgate/inputs/dataset.h"
#include "inputs/test_util.h"

namespace convgate::inputs {
namespace {

using test_util::Fix;
using test_util::Input;
using test_util::MakeSignature;
using test_util::ShapelessInput;
using test_util::Sym;
using ::testing::ElementsAre;

Tensor Zeros(DType dtype, Shape shape) {
  return std::move(Tensor::Allocate(dtype, std::move(shape)).value());
}

Signature BertSignature() {
  return MakeSignature({
      Input("ids", DType::kInt64, {Sym("batch"), Sym("seq")}),
      Input("type_ids", DType::kInt64, {Sym("batch"), Sym("seq")}),
      Input("mask", DType::kInt64, {Sym("batch"), Sym("seq")}),
  });
}

Dataset OneSample(TensorMap sample, std::string origin = "inputs.npz") {
  Dataset dataset;
  dataset.origin = std::move(origin);
  dataset.samples.push_back(std::move(sample));
  return dataset;
}

TEST(ValidateDataset, AcceptsAndReordersToDeclarationOrderDroppingExtras) {
  TensorMap sample;
  ASSERT_TRUE(sample.Insert("mask", Zeros(DType::kInt64, Shape::Of({2, 8}))).ok());
  ASSERT_TRUE(sample.Insert("logits", Zeros(DType::kFloat32, Shape::Of({2, 3}))).ok());
  ASSERT_TRUE(sample.Insert("ids", Zeros(DType::kInt64, Shape::Of({2, 8}))).ok());
  ASSERT_TRUE(sample.Insert("type_ids", Zeros(DType::kInt64, Shape::Of({2, 8}))).ok());
  Dataset dataset = OneSample(std::move(sample));
  ASSERT_TRUE(ValidateDataset(dataset, BertSignature()).ok());
  EXPECT_EQ(dataset.samples[0].Names(), (std::vector<std::string>{"ids", "type_ids", "mask"}));
  EXPECT_THAT(dataset.notes,
              ElementsAre("dropped from inputs.npz (not inputs of the model): logits"));
}

TEST(ValidateDataset, MissingInputNamesWhatTheSampleHas) {
  TensorMap sample;
  ASSERT_TRUE(sample.Insert("ids", Zeros(DType::kInt64, Shape::Of({1, 4}))).ok());
  ASSERT_TRUE(sample.Insert("type_ids", Zeros(DType::kInt64, Shape::Of({1, 4}))).ok());
  Dataset dataset = OneSample(std::move(sample));
  Status status = ValidateDataset(dataset, BertSignature());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "input 'mask' is missing from sample 0 of inputs.npz (has: ids, type_ids)");
  EXPECT_EQ(dataset.samples[0].size(), 2u);  // unchanged on failure
  EXPECT_TRUE(dataset.notes.empty());

  Dataset empty = OneSample(TensorMap());
  EXPECT_EQ(ValidateDataset(empty, BertSignature()).message(),
            "input 'ids' is missing from sample 0 of inputs.npz (has: nothing)");
}

TEST(ValidateDataset, WrongDType) {
  TensorMap sample;
  ASSERT_TRUE(sample.Insert("x", Zeros(DType::kFloat64, Shape::Of({1, 3}))).ok());
  Dataset dataset = OneSample(std::move(sample));
  Status status =
      ValidateDataset(dataset, MakeSignature({Input("x", DType::kFloat32, {Sym("n"), Fix(3)})}));
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "input 'x' in inputs.npz is float64, the model wants float32");
}

TEST(ValidateDataset, WrongRankOrFixedDim) {
  const Signature signature = MakeSignature({Input("x", DType::kFloat32, {Sym("n"), Fix(3)})});
  TensorMap sample;
  ASSERT_TRUE(sample.Insert("x", Zeros(DType::kFloat32, Shape::Of({3}))).ok());
  Dataset dataset = OneSample(std::move(sample));
  EXPECT_EQ(ValidateDataset(dataset, signature).message(),
            "input 'x' in inputs.npz has shape [3], the model wants [n, 3]");

  Dataset two;
  two.origin = "in.npz";
  for (int64_t width : {3, 4}) {
    TensorMap each;
    ASSERT_TRUE(each.Insert("x", Zeros(DType::kFloat32, Shape::Of({5, width}))).ok());
    two.samples.push_back(std::move(each));
  }
  Status status = ValidateDataset(two, signature);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "input 'x' in sample 1 of in.npz has shape [5, 4], the model wants "
            "[n, 3]");
}

TEST(ValidateDataset, SymbolicDimsMustAgreeWithinASample) {
  TensorMap sample;
  ASSERT_TRUE(sample.Insert("ids", Zeros(DType::kInt64, Shape::Of({1, 8}))).ok());
  ASSERT_TRUE(sample.Insert("type_ids", Zeros(DType::kInt64, Shape::Of({1, 8}))).ok());
  ASSERT_TRUE(sample.Insert("mask", Zeros(DType::kInt64, Shape::Of({1, 9}))).ok());
  Dataset dataset = OneSample(std::move(sample));
  Status status = ValidateDataset(dataset, BertSignature());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "inputs in inputs.npz disagree on dim 'seq': input 'ids' has 8, input 'mask' has 9");
}

TEST(ValidateDataset, SymbolsMayDifferAcrossSamplesAndShapelessInputsTakeAnything) {
  const Signature signature = MakeSignature({
      Input("x", DType::kFloat32, {Sym("n")}),
      ShapelessInput("y", DType::kInt32),
  });
  Dataset dataset;
  dataset.origin = "dir";
  for (int64_t n : {2, 5}) {
    TensorMap sample;
    ASSERT_TRUE(sample.Insert("x", Zeros(DType::kFloat32, Shape::Of({n}))).ok());
    ASSERT_TRUE(sample.Insert("y", Zeros(DType::kInt32, Shape::Of({n, n, 1}))).ok());
    dataset.samples.push_back(std::move(sample));
  }
  EXPECT_TRUE(ValidateDataset(dataset, signature).ok());
}

TEST(ValidateDataset, NoSamplesAndUnsupportedTypes) {
  Dataset dataset;
  dataset.origin = "empty.npz";
  Status status = ValidateDataset(dataset, BertSignature());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "no samples in empty.npz");

  TensorInfo wave = ShapelessInput("wave", DType::kFloat32);
  wave.dtype = std::nullopt;
  wave.type_name = "complex64";
  TensorMap sample;
  ASSERT_TRUE(sample.Insert("wave", Zeros(DType::kUInt8, Shape::Of({1}))).ok());
  Dataset complex = OneSample(std::move(sample));
  status = ValidateDataset(complex, MakeSignature({wave}));
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            "the model's input 'wave' has type complex64, which convgate cannot feed");
}

}  // namespace
}  // namespace convgate::inputs
