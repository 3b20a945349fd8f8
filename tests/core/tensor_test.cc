#include "convgate/core/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <vector>

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

// Adopt views memory another object owns (an ONNX Runtime output, a mapped file) without copying
// it, and keeps that owner alive exactly as long as a tensor refers to it.
TEST(Tensor, AdoptViewsTheOwnersBytesAndReleasesItWithTheLastTensor) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1.5f, -2.0f, 3.25f});
  std::weak_ptr<std::vector<float>> watch = owner;
  std::span<std::byte> bytes(reinterpret_cast<std::byte*>(owner->data()), 3 * sizeof(float));
  Result<Tensor> tensor = Tensor::Adopt(DType::kFloat32, Shape::Of({3}), bytes, owner);
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_EQ(tensor->bytes().data(), bytes.data());  // viewed, not copied
  EXPECT_EQ(tensor->GetDouble(2), 3.25);
  owner.reset();
  EXPECT_FALSE(watch.expired());  // the tensor holds it
  Tensor moved = std::move(tensor).value();
  EXPECT_EQ(moved.GetDouble(1), -2.0);
  Tensor copy = moved.Clone();
  moved = Tensor();
  EXPECT_TRUE(watch.expired());  // released with the last tensor; the clone has its own bytes
  EXPECT_EQ(copy.GetDouble(0), 1.5);

  std::vector<float> other(2);
  std::span<std::byte> short_bytes(reinterpret_cast<std::byte*>(other.data()), 2 * sizeof(float));
  EXPECT_FALSE(Tensor::Adopt(DType::kFloat32, Shape::Of({3}), short_bytes, nullptr).ok());
  EXPECT_FALSE(Tensor::Adopt(DType::kString, Shape::Of({2}), short_bytes, nullptr).ok());
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

TEST(Tensor, AllocatesEmptyStrings) {
  Result<Tensor> tensor = Tensor::Allocate(DType::kString, Shape::Of({2, 3}));
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->Describe(), "string[2, 3]");
  EXPECT_EQ(tensor->byte_size(), 0u);
  EXPECT_TRUE(tensor->bytes().empty());
  ASSERT_EQ(tensor->strings().size(), 6u);
  for (const std::string& value : tensor->strings()) EXPECT_EQ(value, "");
}

TEST(Tensor, NumericTensorsHaveNoStrings) {
  Tensor floats = std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({4})).value());
  EXPECT_TRUE(floats.strings().empty());
}

TEST(Tensor, FromStringsChecksTheCount) {
  Result<Tensor> tensor = Tensor::FromStrings(Shape::Of({2}), {"a", std::string("b\0c", 3)});
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->dtype(), DType::kString);
  EXPECT_EQ(tensor->strings()[1], std::string("b\0c", 3));
  Result<Tensor> wrong = Tensor::FromStrings(Shape::Of({3}), {"a"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "string[3] needs 3 strings, got 1");
}

TEST(Tensor, StringsHaveNoByteRepresentation) {
  Result<Tensor> tensor = Tensor::FromBytes(DType::kString, Shape::Of({0}), {});
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), StatusCode::kInvalidArgument);
}

TEST(Tensor, StringsCloneDeeplyAndCompareByContent) {
  Tensor a = std::move(Tensor::FromStrings(Shape::Of({2}), {"monday", "Köln"}).value());
  Tensor b = a.Clone();
  EXPECT_TRUE(a.BitwiseEquals(b));
  b.strings()[0] = "MONDAY";
  EXPECT_FALSE(a.BitwiseEquals(b));
  EXPECT_EQ(a.strings()[0], "monday");
  // Same count and shape but a different dtype never compares equal.
  Tensor empty_strings = std::move(Tensor::Allocate(DType::kString, Shape::Of({0})).value());
  Tensor empty_floats = std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({0})).value());
  EXPECT_FALSE(empty_strings.BitwiseEquals(empty_floats));
  EXPECT_TRUE(empty_strings.BitwiseEquals(empty_strings.Clone()));
}

TEST(Tensor, StringsReadAsNaNAndIgnoreSetDouble) {
  Tensor tensor = std::move(Tensor::FromStrings(Shape(), {"7"}).value());
  tensor.SetDouble(0, 1.0);
  EXPECT_TRUE(std::isnan(tensor.GetDouble(0)));
  EXPECT_EQ(tensor.strings()[0], "7");
}

TEST(DType, StringIsNeitherNumberNorBool) {
  EXPECT_EQ(DTypeName(DType::kString), "string");
  EXPECT_EQ(ParseDType("string"), DType::kString);
  EXPECT_EQ(DTypeSize(DType::kString), 0u);
  EXPECT_FALSE(IsFloating(DType::kString));
  EXPECT_FALSE(IsInteger(DType::kString));
  EXPECT_FALSE(IsSigned(DType::kString));
  EXPECT_FALSE(IsInteger(DType::kBool));
  EXPECT_TRUE(IsInteger(DType::kUInt64));
  for (DType dtype : kAllDTypes) {
    EXPECT_NE(dtype, DType::kString);
    EXPECT_GT(DTypeSize(dtype), 0u) << DTypeName(dtype);
    EXPECT_EQ(ParseDType(DTypeName(dtype)), dtype);
  }
  EXPECT_EQ(ParseDType("str"), std::nullopt);
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
