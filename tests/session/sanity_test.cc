// The run gate's sanity rules on hand-made tensors and declarations.
#include "convgate/session/sanity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "testing/tensor_info.h"

namespace convgate::session {
namespace {

using testing::Declared;

Tensor Floats(Shape shape, float value) {
  std::vector<float> values(static_cast<size_t>(shape.NumElements()), value);
  return Tensor::FromVector<float>(DType::kFloat32, std::move(shape), values);
}

std::string Joined(const SanityCheck& check) {
  std::string text;
  for (const std::string& failure : check.failures) text += failure + "\n";
  return text;
}

TEST(Sanity, ACleanOutputPasses) {
  SymbolBindings bindings;
  TensorInfo declared = Declared("y", DType::kFloat32, {Dim::Symbolic("batch"), Dim::Fixed(4)});
  SanityCheck check =
      CheckOutputSanity(0, "y", Floats(Shape::Of({2, 4}), 1.0f), &declared, true, bindings);
  EXPECT_TRUE(check.passed) << Joined(check);
  EXPECT_EQ(check.values.max, 1.0);
  EXPECT_EQ(bindings.Describe(), std::vector<std::string>{"batch=2 (from output 'y' dim 0)"});
}

TEST(Sanity, IntroducedNaNAndInfAreNamedWithTheirFirstIndex) {
  SymbolBindings bindings;
  TensorInfo declared = Declared("y", DType::kFloat32, {Dim::Fixed(2), Dim::Fixed(2)});
  Tensor tensor = Floats(Shape::Of({2, 2}), 0.0f);
  tensor.data<float>()[1] = std::nanf("");
  tensor.data<float>()[3] = std::numeric_limits<float>::infinity();
  SanityCheck check = CheckOutputSanity(0, "y", tensor, &declared, true, bindings);
  ASSERT_FALSE(check.passed);
  ASSERT_EQ(check.failures.size(), 2u);
  EXPECT_EQ(check.failures[0],
            "introduced NaN: output 'y' has 1 of 4 elements (25%) NaN, first at [0, 1] (the "
            "inputs are finite, so the model produced them)");
  EXPECT_NE(check.failures[1].find("introduced Inf"), std::string::npos);
  EXPECT_NE(check.failures[1].find("[1, 1]"), std::string::npos);
  // With non-finite inputs the NaN is not claimed to be the model's doing.
  SanityCheck unsure = CheckOutputSanity(0, "y", tensor, &declared, false, bindings);
  EXPECT_NE(unsure.failures[0].find("non-finite NaN"), std::string::npos) << Joined(unsure);
}

// A decoded generation that is empty or whitespace says nothing: the verify-conversion gate's LM
// check fails it. One real character anywhere passes.
TEST(Sanity, BlankTextFailsAndAnyCharacterPasses) {
  SymbolBindings bindings;
  TensorInfo declared = Declared("text", DType::kString, {Dim::Fixed(2)});
  Result<Tensor> blank = Tensor::FromStrings(Shape::Of({2}), {"", " \n\t"});
  ASSERT_TRUE(blank.ok());
  SanityCheck check = CheckOutputSanity(0, "text", *blank, &declared, true, bindings);
  EXPECT_FALSE(check.passed);
  EXPECT_NE(Joined(check).find("blank: output 'text' holds 2 strings, every one empty or "
                               "whitespace"),
            std::string::npos)
      << Joined(check);
  Result<Tensor> some = Tensor::FromStrings(Shape::Of({2}), {"", " a"});
  ASSERT_TRUE(some.ok());
  check = CheckOutputSanity(0, "text", *some, &declared, true, bindings);
  EXPECT_TRUE(check.passed) << Joined(check);
}

TEST(Sanity, EmptyOutputFails) {
  SymbolBindings bindings;
  TensorInfo declared = Declared("y", DType::kFloat32, {Dim::Symbolic("n")});
  SanityCheck check =
      CheckOutputSanity(0, "y", Floats(Shape::Of({0}), 0.0f), &declared, true, bindings);
  ASSERT_FALSE(check.passed);
  EXPECT_EQ(check.failures[0], "empty: output 'y' has shape [0] and no elements");
}

TEST(Sanity, DtypeAndFixedDimMismatchesFail) {
  SymbolBindings bindings;
  TensorInfo declared = Declared("y", DType::kFloat16, {Dim::Symbolic("batch"), Dim::Fixed(12)});
  SanityCheck check =
      CheckOutputSanity(0, "y", Floats(Shape::Of({1, 10}), 0.5f), &declared, true, bindings);
  ASSERT_EQ(check.failures.size(), 2u) << Joined(check);
  EXPECT_EQ(check.failures[0], "dtype: output 'y' is float32 but the model declares float16");
  EXPECT_EQ(check.failures[1],
            "shape: output 'y' is [1, 10] but the model declares [batch, 12]: dim 1 is 10, "
            "declared 12");
}

TEST(Sanity, RankMismatchFails) {
  SymbolBindings bindings;
  TensorInfo declared = Declared("y", DType::kFloat32, {Dim::Fixed(10)});
  SanityCheck check =
      CheckOutputSanity(0, "y", Floats(Shape::Of({1, 10}), 0.5f), &declared, true, bindings);
  ASSERT_EQ(check.failures.size(), 1u);
  EXPECT_EQ(check.failures[0],
            "shape: output 'y' has rank 2 [1, 10] but the model declares rank 1 [10]");
}

TEST(Sanity, SymbolsBindAcrossInputsAndOutputs) {
  Signature signature;
  signature.inputs.push_back(Declared("x", DType::kFloat32, {Dim::Symbolic("batch")}));
  TensorMap sample;
  ASSERT_TRUE(sample.Insert("x", Floats(Shape::Of({2}), 0.0f)).ok());
  SymbolBindings bindings;
  bindings.BindInputs(signature, sample);
  TensorInfo first = Declared("a", DType::kFloat32, {Dim::Symbolic("batch"), Dim::Symbolic("k")});
  TensorInfo second = Declared("b", DType::kFloat32, {Dim::Symbolic("k")});
  SanityCheck bad_batch =
      CheckOutputSanity(0, "a", Floats(Shape::Of({3, 5}), 0.0f), &first, true, bindings);
  ASSERT_EQ(bad_batch.failures.size(), 1u);
  EXPECT_EQ(bad_batch.failures[0],
            "shape: output 'a' dim 0 ('batch') is 3, but 'batch' is 2 from input 'x' dim 0");
  // 'k' was bound by output 'a'; output 'b' must agree.
  SanityCheck bad_k =
      CheckOutputSanity(0, "b", Floats(Shape::Of({4}), 0.0f), &second, true, bindings);
  ASSERT_EQ(bad_k.failures.size(), 1u);
  EXPECT_EQ(bad_k.failures[0],
            "shape: output 'b' dim 0 ('k') is 4, but 'k' is 5 from output 'a' dim 1");
  SanityCheck good_k =
      CheckOutputSanity(0, "b", Floats(Shape::Of({5}), 0.0f), &second, true, bindings);
  EXPECT_TRUE(good_k.passed);
}

TEST(Sanity, UnknownDimsAndUndeclaredShapesAcceptAnything) {
  SymbolBindings bindings;
  TensorInfo unknown = Declared("y", DType::kFloat32, {Dim::Unknown(), Dim::Fixed(2)});
  EXPECT_TRUE(
      CheckOutputSanity(0, "y", Floats(Shape::Of({7, 2}), 0.0f), &unknown, true, bindings).passed);
  TensorInfo no_shape = Declared("z", DType::kFloat32, {});
  no_shape.has_shape = false;
  EXPECT_TRUE(
      CheckOutputSanity(0, "z", Floats(Shape::Of({3, 3, 3}), 0.0f), &no_shape, true, bindings)
          .passed);
}

TEST(Sanity, AnUndeclaredOutputFails) {
  SymbolBindings bindings;
  SanityCheck check =
      CheckOutputSanity(0, "extra", Floats(Shape::Of({1}), 0.0f), nullptr, true, bindings);
  ASSERT_FALSE(check.passed);
  EXPECT_NE(check.failures[0].find("does not declare"), std::string::npos);
}

}  // namespace
}  // namespace convgate::session
