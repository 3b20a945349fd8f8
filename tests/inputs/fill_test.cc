// Value semantics of GenerateDataset: fills, ranges and dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "convgate/inputs/dataset.h"
#include "inputs/test_util.h"

namespace convgate::inputs {
namespace {

using test_util::Fix;
using test_util::Input;
using test_util::MakeSignature;

// One tensor of `count` elements generated with `options` for a single input "x".
Tensor GenerateOne(DType dtype, int64_t count, InputOptions options = {}) {
  Result<Dataset> dataset =
      GenerateDataset(MakeSignature({Input("x", dtype, {Fix(count)})}), options);
  if (!dataset.ok()) {
    ADD_FAILURE() << dataset.status().ToString();
    return Tensor();
  }
  return std::move(*dataset->samples[0].Find("x"));
}

InputOptions WithFill(Fill fill, std::optional<ValueRange> range = std::nullopt) {
  InputOptions options;
  options.fill = fill;
  options.range = range;
  return options;
}

struct Moments {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double mean = 0.0;
  double stddev = 0.0;
  std::set<double> distinct;
};

Moments Measure(const Tensor& tensor) {
  Moments moments;
  double sum = 0.0;
  double sum_sq = 0.0;
  for (int64_t flat = 0; flat < tensor.num_elements(); ++flat) {
    const double value = tensor.GetDouble(flat);
    moments.min = std::min(moments.min, value);
    moments.max = std::max(moments.max, value);
    sum += value;
    sum_sq += value * value;
    if (moments.distinct.size() < 1000) moments.distinct.insert(value);
  }
  const double count = static_cast<double>(tensor.num_elements());
  moments.mean = sum / count;
  moments.stddev = std::sqrt(sum_sq / count - moments.mean * moments.mean);
  return moments;
}

TEST(Fill, ZerosAndOnesForEveryDType) {
  for (DType dtype : kAllDTypes) {
    const Moments zeros = Measure(GenerateOne(dtype, 8, WithFill(Fill::kZeros)));
    EXPECT_EQ(zeros.distinct, std::set<double>{0.0}) << DTypeName(dtype);
    const Moments ones = Measure(GenerateOne(dtype, 8, WithFill(Fill::kOnes)));
    EXPECT_EQ(ones.distinct, std::set<double>{1.0}) << DTypeName(dtype);
  }
}

TEST(Fill, DefaultFloatUniformIsZeroToOne) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    const Moments moments = Measure(GenerateOne(dtype, 20000));
    EXPECT_GE(moments.min, 0.0) << DTypeName(dtype);
    EXPECT_LE(moments.max, 1.0) << DTypeName(dtype);  // float16 can round up to hi itself
    EXPECT_NEAR(moments.mean, 0.5, 0.02) << DTypeName(dtype);
  }
  const Moments exact = Measure(GenerateOne(DType::kFloat64, 20000));
  EXPECT_LT(exact.max, 1.0);
}

TEST(Fill, ExplicitFloatRange) {
  const Moments moments =
      Measure(GenerateOne(DType::kFloat32, 20000, WithFill(Fill::kUniform, ValueRange{-3, 5})));
  EXPECT_GE(moments.min, -3.0);
  EXPECT_LT(moments.max, 5.0);
  EXPECT_NEAR(moments.mean, 1.0, 0.1);
  EXPECT_NEAR(moments.stddev, 8.0 / std::sqrt(12.0), 0.05);
}

TEST(Fill, DefaultIntegerRangeIsZeroOrOne) {
  for (DType dtype : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8,
                      DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    EXPECT_EQ(Measure(GenerateOne(dtype, 200)).distinct, (std::set<double>{0.0, 1.0}))
        << DTypeName(dtype);
  }
}

TEST(Fill, IntegerRangeIsInclusiveAfterRounding) {
  const Tensor tensor =
      GenerateOne(DType::kInt32, 2000, WithFill(Fill::kUniform, ValueRange{-2.5, 3.7}));
  EXPECT_EQ(Measure(tensor).distinct, (std::set<double>{-2, -1, 0, 1, 2, 3}));
}

TEST(Fill, IntegerRangeIsClampedToTheDType) {
  const Moments int8 =
      Measure(GenerateOne(DType::kInt8, 20000, WithFill(Fill::kUniform, ValueRange{-1e6, 1e6})));
  EXPECT_EQ(int8.min, -128.0);
  EXPECT_EQ(int8.max, 127.0);
  const Moments uint8 =
      Measure(GenerateOne(DType::kUInt8, 2000, WithFill(Fill::kUniform, ValueRange{-10, 2})));
  EXPECT_EQ(uint8.distinct, (std::set<double>{0, 1, 2}));
  const Tensor int64 =
      GenerateOne(DType::kInt64, 100, WithFill(Fill::kUniform, ValueRange{-1e300, 1e300}));
  EXPECT_EQ(int64.num_elements(), 100);  // the full int64 range, without overflow
}

TEST(Fill, EmptyIntegerRangeIsAnError) {
  InputOptions options = WithFill(Fill::kUniform, ValueRange{0.2, 0.8});
  Result<Dataset> dataset =
      GenerateDataset(MakeSignature({Input("ids", DType::kInt64, {Fix(2)})}), options);
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(dataset.status().message(), "input 'ids': value range [0.2, 0.8] holds no int64 value");
  options.range = ValueRange{-5, -1};
  dataset = GenerateDataset(MakeSignature({Input("ids", DType::kUInt8, {Fix(2)})}), options);
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().message(), "input 'ids': value range [-5, -1] holds no uint8 value");
}

TEST(Fill, BoolFills) {
  EXPECT_EQ(Measure(GenerateOne(DType::kBool, 200)).distinct, (std::set<double>{0, 1}));
  EXPECT_EQ(Measure(GenerateOne(DType::kBool, 200, WithFill(Fill::kNormal))).distinct,
            (std::set<double>{0, 1}));
  const Tensor bits = GenerateOne(DType::kBool, 20000);
  for (uint8_t byte : bits.data<uint8_t>()) ASSERT_LE(byte, 1);  // valid numpy bools
  EXPECT_NEAR(Measure(bits).mean, 0.5, 0.02);
}

TEST(Fill, NormalFloatDefaultsToStandardNormal) {
  const Moments moments = Measure(GenerateOne(DType::kFloat32, 50000, WithFill(Fill::kNormal)));
  EXPECT_NEAR(moments.mean, 0.0, 0.03);
  EXPECT_NEAR(moments.stddev, 1.0, 0.03);
  EXPECT_LT(moments.min, -1.0);  // not clipped to the range
  EXPECT_GT(moments.max, 1.0);
}

TEST(Fill, NormalUsesRangeMidpointAndHalfWidth) {
  const Moments moments =
      Measure(GenerateOne(DType::kFloat64, 50000, WithFill(Fill::kNormal, ValueRange{2, 6})));
  EXPECT_NEAR(moments.mean, 4.0, 0.05);
  EXPECT_NEAR(moments.stddev, 2.0, 0.05);
}

TEST(Fill, NormalIntegersAreRoundedAndClamped) {
  const Tensor tensor =
      GenerateOne(DType::kInt32, 50000, WithFill(Fill::kNormal, ValueRange{-10, 30}));
  const Moments moments = Measure(tensor);
  EXPECT_NEAR(moments.mean, 10.0, 0.5);
  EXPECT_NEAR(moments.stddev, 20.0, 0.5);
  for (int64_t flat = 0; flat < 100; ++flat) {
    EXPECT_EQ(tensor.GetDouble(flat), std::round(tensor.GetDouble(flat)));
  }
  const Moments uint8 =
      Measure(GenerateOne(DType::kUInt8, 5000, WithFill(Fill::kNormal, ValueRange{-500, 500})));
  EXPECT_EQ(uint8.min, 0.0);
  EXPECT_EQ(uint8.max, 255.0);
}

TEST(Fill, PerInputFillAndRangeOverrideTheGlobalOnes) {
  InputOptions options = WithFill(Fill::kUniform, ValueRange{5, 6});
  options.fill_per_input["b"] = Fill::kZeros;
  options.range_per_input["c"] = ValueRange{-2, -1};
  Result<Dataset> dataset = GenerateDataset(
      MakeSignature({Input("a", DType::kFloat32, {Fix(100)}), Input("b", DType::kFloat32, {Fix(4)}),
                     Input("c", DType::kFloat32, {Fix(100)})}),
      options);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Moments a = Measure(*dataset->samples[0].Find("a"));
  const Moments b = Measure(*dataset->samples[0].Find("b"));
  const Moments c = Measure(*dataset->samples[0].Find("c"));
  EXPECT_GE(a.min, 5.0);
  EXPECT_EQ(b.distinct, std::set<double>{0.0});
  EXPECT_GE(c.min, -2.0);
  EXPECT_LT(c.max, -1.0);
}

}  // namespace
}  // namespace convgate::inputs
