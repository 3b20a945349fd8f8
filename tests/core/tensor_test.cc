#include "convgate/core/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "convgate/core/float16.h"

namespace convgate {
namespace {

TEST(Tensor, AllocatesZeroFilled) {
  Result<Tensor> tensor = Tensor::Allocate(DType::kInt64, Shape::Of({2, 3}));
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->byte_size(), 48u);
  for (int64_t value : tensor->data<int64_t>()) EXPECT_EQ(value, 0);
  EXPECT_EQ(tensor->Describe(), "int64[2, 3]");
}

TEST(Tensor, FromBytesChecksTheSize) {
  std::vector<std::byte> bytes(7);
  Result<Tensor> tensor = Tensor::FromBytes(DType::kFloat32, Shape::Of({2}), bytes);
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().message(), "float32[2] needs 8 bytes, got 7");
}

TEST(Tensor, GetAndSetDoubleForEveryDType) {
  for (DType dtype : kAllDTypes) {
    Tensor tensor = std::move(Tensor::Allocate(dtype, Shape::Of({3})).value());
    tensor.SetDouble(0, 1.0);
    tensor.SetDouble(1, 2.0);
    EXPECT_EQ(tensor.GetDouble(0), 1.0) << DTypeName(dtype);
    EXPECT_EQ(tensor.GetDouble(1), dtype == DType::kBool ? 1.0 : 2.0) << DTypeName(dtype);
    EXPECT_EQ(tensor.GetDouble(2), 0.0) << DTypeName(dtype);
  }
}

TEST(Tensor, SetDoubleSaturatesIntegersAndRoundsHalves) {
  Tensor ints = std::move(Tensor::Allocate(DType::kInt8, Shape::Of({3})).value());
  ints.SetDouble(0, 1000.0);
  ints.SetDouble(1, -1000.0);
  ints.SetDouble(2, std::nan(""));
  EXPECT_EQ(ints.GetDouble(0), 127.0);
  EXPECT_EQ(ints.GetDouble(1), -128.0);
  EXPECT_EQ(ints.GetDouble(2), 0.0);

  Tensor halves = std::move(Tensor::Allocate(DType::kFloat16, Shape::Of({1})).value());
  halves.SetDouble(0, 0.1);
  EXPECT_EQ(halves.data<uint16_t>()[0], FloatToHalf(0.1f));
}

TEST(Tensor, CloneIsDeepAndEqual) {
  Tensor a = Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2}), {1.5f, -2.0f});
  Tensor b = a.Clone();
  EXPECT_TRUE(a.BitwiseEquals(b));
  b.data<float>()[0] = 0.0f;
  EXPECT_FALSE(a.BitwiseEquals(b));
  EXPECT_EQ(a.data<float>()[0], 1.5f);
}

TEST(TensorMap, KeepsInsertionOrderAndRejectsDuplicates) {
  TensorMap map;
  ASSERT_TRUE(map.Insert("b", Tensor::FromVector<float>(DType::kFloat32, Shape(), {1.0f})).ok());
  ASSERT_TRUE(map.Insert("a", Tensor::FromVector<float>(DType::kFloat32, Shape(), {2.0f})).ok());
  EXPECT_EQ(map.Names(), (std::vector<std::string>{"b", "a"}));
  Status dup = map.Insert("a", Tensor::FromVector<float>(DType::kFloat32, Shape(), {3.0f}));
  EXPECT_EQ(dup.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(map.Find("a")->data<float>()[0], 2.0f);
  EXPECT_EQ(map.Find("c"), nullptr);
}

}  // namespace
}  // namespace convgate
