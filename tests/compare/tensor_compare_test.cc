// Table tests of the comparator itself (docs/architecture.md rule 6): NaN, Inf, -0, empty, fp16,
// bf16, integers, structure mismatches, and the exact wording of every failure sentence.
#include "convgate/compare/tensor_compare.h"

#include <gtest/gtest.h>

#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace convgate::compare {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor MakeTensor(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor tensor = std::move(Tensor::Allocate(dtype, shape).value());
  for (size_t idx = 0; idx < values.size(); ++idx) {
    tensor.SetDouble(static_cast<int64_t>(idx), values[idx]);
  }
  return tensor;
}

struct Side {
  DType dtype;
  Shape shape;
  std::vector<double> values;
};

struct CompareCase {
  std::string name;
  Side source;
  Side target;
  Tolerance tolerance;
  // Expectations.
  std::vector<std::string> failures;
  int64_t mismatches = 0;
  int64_t worst_flat = -1;
  std::vector<std::string> notes = {};
  bool values_compared = true;
};

Side F32(Shape shape, std::vector<double> values) {
  return {DType::kFloat32, std::move(shape), std::move(values)};
}
Side F32(std::vector<double> values) {
  const auto count = static_cast<int64_t>(values.size());
  return F32(Shape::Of({count}), std::move(values));
}
Side Of(DType dtype, std::vector<double> values) {
  const auto count = static_cast<int64_t>(values.size());
  return {dtype, Shape::Of({count}), std::move(values)};
}

const Tolerance kDefault;  // atol 1e-05, rtol 0.001
const Tolerance kZero{0.0, 0.0};

// clang-format off
const CompareCase kCases[] = {
  {"Identical", F32({1, 2, 3}), F32({1, 2, 3}), kDefault, {}, 0, -1},
  {"WithinTolerance", F32({1, 100}), F32({1.0005, 100.05}), kDefault, {}, 0, -1},
  {"OutsideTolerance", F32({0.5, 0.25, 1}), F32({0.5, 0.26, 1}), kDefault,
   {"1 of 3 elements (33.3%) outside atol 1e-05 + rtol 0.001 * |source|; worst at [1]: "
    "source 0.25, target 0.26 (|diff| 0.01, allowed 0.00026)"}, 1, 1},
  // The larger |diff| at [0, 0] is within 5x its allowance; [0, 1] is 90x over.
  {"WorstIsLargestExcessNotLargestDiff", F32(Shape::Of({1, 2}), {100, 0.1}),
   F32(Shape::Of({1, 2}), {100.5, 0.11}), kDefault,
   {"2 of 2 elements (100%) outside atol 1e-05 + rtol 0.001 * |source|; worst at [0, 1]: "
    "source 0.1, target 0.11 (|diff| 0.01, allowed 0.00011)"}, 2, 1},
  {"TwoValuesThatPrintAlikeGetMoreDigits", F32({0.5}), F32({0.5000001}), kZero,
   {"1 of 1 elements (100%) outside atol 0 + rtol 0 * |source|; worst at [0]: "
    "source 0.5, target 0.5000001 (|diff| 1.19e-07, allowed 0)"}, 1, 0},
  {"NegativeZeroEqualsZero", F32({0.0, -0.0}), F32({-0.0, 0.0}), kZero, {}, 0, -1},
  {"ZeroToleranceWorstIsLargestDiff", F32({1, 2, 3}), F32({1.5, 2, 5}), kZero,
   {"2 of 3 elements (66.7%) outside atol 0 + rtol 0 * |source|; worst at [2]: "
    "source 3, target 5 (|diff| 2, allowed 0)"}, 2, 2},
  {"IntroducedNaN", F32(Shape::Of({2, 2}), {1, 2, 3, 4}), F32(Shape::Of({2, 2}), {1, kNaN, 3, kNaN}),
   kDefault,
   {"introduced NaN: 2 of 4 elements (50%) are NaN in the target where the source is finite; "
    "first at [0, 1] (source 2)"}, 2, 1},
  {"IntroducedInf", F32({1, 2, 3}), F32({1, -kInf, kInf}), kDefault,
   {"introduced Inf: 2 of 3 elements (66.7%) are Inf in the target where the source is finite; "
    "first at [1] (source 2, target -inf)"}, 2, 1},
  {"SharedNaNAndInfAreEqual", F32({kNaN, kInf, -kInf, 1}), F32({kNaN, kInf, -kInf, 1}), kDefault,
   {}, 0, -1,
   {"shared NaN: 1 of 4 elements (25%) are NaN in both source and target (treated as equal)",
    "shared Inf: 2 of 4 elements (50%) are the same infinity in both source and target "
    "(treated as equal)"}},
  {"InheritedNaN", F32({kNaN, 1}), F32({0.5, 1}), kDefault,
   {"inherited non-finite: 1 of 2 elements (50%) are NaN or Inf in the source and differ in the "
    "target, so the source itself is unstable; first at [0]: source nan, target 0.5"}, 1, 0},
  {"OppositeInfinitiesAreInherited", F32({kInf}), F32({-kInf}), kDefault,
   {"inherited non-finite: 1 of 1 elements (100%) are NaN or Inf in the source and differ in the "
    "target, so the source itself is unstable; first at [0]: source inf, target -inf"}, 1, 0},
  // Precedence of the worst element: introduced, then finite, then inherited; the failures come
  // in the same order.
  {"IntroducedIsWorstAndListedFirst", F32({1, 2, 3, kInf}), F32({1.5, kNaN, 3, 0}), kDefault,
   {"introduced NaN: 1 of 4 elements (25%) are NaN in the target where the source is finite; "
    "first at [1] (source 2)",
    "1 of 4 elements (25%) outside atol 1e-05 + rtol 0.001 * |source|; worst at [0]: "
    "source 1, target 1.5 (|diff| 0.5, allowed 0.00101)",
    "inherited non-finite: 1 of 4 elements (25%) are NaN or Inf in the source and differ in the "
    "target, so the source itself is unstable; first at [3]: source inf, target 0"}, 3, 1},
  {"Empty", F32(Shape::Of({0, 3}), {}), F32(Shape::Of({0, 3}), {}), kDefault, {}, 0, -1},
  {"EmptyShapesDiffer", F32(Shape::Of({0, 3}), {}), F32(Shape::Of({0, 4}), {}), kDefault,
   {"shape mismatch: source [0, 3], target [0, 4]"}, 0, -1},
  {"ShapeMismatchSameCount", F32(Shape::Of({1, 4}), {1, 2, 3, 4}), F32({1, 2, 3, 4}), kDefault,
   {"shape mismatch: source [1, 4], target [4]"}, 0, -1},
  // Elements pair up in row-major order and are located in the source's shape.
  {"ShapeMismatchSameCountValuesDiffer", F32(Shape::Of({2, 2}), {1, 2, 3, 4}), F32({1, 2, 3, 5}),
   kDefault,
   {"shape mismatch: source [2, 2], target [4]",
    "1 of 4 elements (25%) outside atol 1e-05 + rtol 0.001 * |source|; worst at [1, 1]: "
    "source 4, target 5 (|diff| 1, allowed 0.00401)"}, 1, 3},
  {"ShapeMismatchOtherCount", F32(Shape::Of({1, 10}), std::vector<double>(10)),
   F32(std::vector<double>(12)), kDefault,
   {"shape mismatch: source [1, 10], target [12]; values not compared (10 vs 12 elements)"}, 0,
   -1, {}, false},
  // fp16 rounds by at most 2^-11 relative, inside rtol 1e-3: only the dtype differs.
  {"Fp16TargetOfFp32Source", F32({0.1, 0.2, 0.3, 1000}), Of(DType::kFloat16, {0.1, 0.2, 0.3, 1000}),
   kDefault, {"dtype mismatch: source float32, target float16"}, 0, -1},
  {"Fp16OverflowIsIntroducedInf", F32({1, 70000}), Of(DType::kFloat16, {1, 70000}), kDefault,
   {"dtype mismatch: source float32, target float16",
    "introduced Inf: 1 of 2 elements (50%) are Inf in the target where the source is finite; "
    "first at [1] (source 70000, target inf)"}, 1, 1},
  {"Fp16BothSidesWidenExactly", Of(DType::kFloat16, {65504, 6e-8, kNaN}),
   Of(DType::kFloat16, {65504, 6e-8, kNaN}), kZero, {}, 0, -1,
   {"shared NaN: 1 of 3 elements (33.3%) are NaN in both source and target (treated as equal)"}},
  // bf16 keeps 8 significant bits: 1 + 2^-7 is the next value after 1.
  {"BFloat16", Of(DType::kBFloat16, {1, 2}), Of(DType::kBFloat16, {1.0078125, 2}), kDefault,
   {"1 of 2 elements (50%) outside atol 1e-05 + rtol 0.001 * |source|; worst at [0]: "
    "source 1, target 1.00781 (|diff| 0.00781, allowed 0.00101)"}, 1, 0},
  // Integers compare exactly whatever the tolerance.
  {"Int32IgnoresTolerance", Of(DType::kInt32, {1, 2, 3}), Of(DType::kInt32, {1, 2, 4}), {10, 10},
   {"1 of 3 elements (33.3%) differ (integer and bool outputs compare exactly); worst at [2]: "
    "source 3, target 4 (|diff| 1)"}, 1, 2},
  {"IntWorstIsLargestDiff", Of(DType::kInt8, {0, 0, 0}), Of(DType::kInt8, {-1, 100, -100}),
   kDefault,
   {"3 of 3 elements (100%) differ (integer and bool outputs compare exactly); worst at [1]: "
    "source 0, target 100 (|diff| 100)"}, 3, 1},
  {"Int32VsInt64SameValues", Of(DType::kInt32, {-5, 7}), Of(DType::kInt64, {-5, 7}), kDefault,
   {"dtype mismatch: source int32, target int64"}, 0, -1},
  {"Int8MinusOneIsNotUInt8Max", Of(DType::kInt8, {-1}), Of(DType::kUInt8, {255}), kDefault,
   {"dtype mismatch: source int8, target uint8",
    "1 of 1 elements (100%) differ (integer and bool outputs compare exactly); worst at [0]: "
    "source -1, target 255 (|diff| 256)"}, 1, 0},
  {"Bool", Of(DType::kBool, {1, 0, 1}), Of(DType::kBool, {1, 1, 1}), kDefault,
   {"1 of 3 elements (33.3%) differ (integer and bool outputs compare exactly); worst at [1]: "
    "source false, target true (|diff| 1)"}, 1, 1},
  // One floating side: the tolerance applies, in double.
  {"Int64SourceFloatTarget", Of(DType::kInt64, {3, 1000}), F32({3.000001, 1000}), kDefault,
   {"dtype mismatch: source int64, target float32"}, 0, -1},
};
// clang-format on

// Names the case instead of dumping its bytes when a test fails.
void PrintTo(const CompareCase& c, std::ostream* os) { *os << c.name; }

class CompareTable : public ::testing::TestWithParam<CompareCase> {};

TEST_P(CompareTable, FailuresMismatchesAndWorst) {
  const CompareCase& c = GetParam();
  const Tensor source = MakeTensor(c.source.dtype, c.source.shape, c.source.values);
  const Tensor target = MakeTensor(c.target.dtype, c.target.shape, c.target.values);
  const TensorComparison result = CompareTensors(source, target, c.tolerance);
  EXPECT_EQ(result.failures, c.failures);
  EXPECT_EQ(result.notes, c.notes);
  EXPECT_EQ(result.passed, c.failures.empty());
  EXPECT_EQ(result.values_compared, c.values_compared);
  EXPECT_EQ(result.mismatches, c.mismatches);
  EXPECT_EQ(result.worst.flat, c.worst_flat);
  if (c.worst_flat >= 0) {
    EXPECT_EQ(result.worst.index, source.shape().Unravel(c.worst_flat));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CompareTable, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.name; });

// int64 values beyond 2^53 that differ by 1 round to the same double (or to doubles 2 apart);
// the comparison and the |diff| are done in the integer domain.
TEST(CompareTensors, Int64BeyondTwoToThe53DiffersByOne) {
  const int64_t big = (int64_t{1} << 53) + 1;
  const Tensor source =
      Tensor::FromVector(DType::kInt64, Shape::Of({2}), std::vector<int64_t>{big, big});
  const Tensor target =
      Tensor::FromVector(DType::kInt64, Shape::Of({2}), std::vector<int64_t>{big, big + 1});
  const TensorComparison result = CompareTensors(source, target, Tolerance{1e6, 1.0});
  EXPECT_TRUE(result.exact);
  EXPECT_EQ(result.mismatches, 1);
  EXPECT_EQ(result.worst.flat, 1);
  EXPECT_EQ(result.worst.abs_error, 1.0);
  EXPECT_EQ(result.errors.max_abs_error, 1.0);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(
      result.failures[0],
      "1 of 2 elements (50%) differ (integer and bool outputs compare exactly); worst at [1]: "
      "source 9007199254740993, target 9007199254740994 (|diff| 1)");
}

TEST(CompareTensors, Int64NearTheTopOfTheRange) {
  const int64_t top = std::numeric_limits<int64_t>::max();
  const Tensor source = Tensor::FromVector(DType::kInt64, Shape::Of({3}),
                                           std::vector<int64_t>{top, top - 1, int64_t{1} << 62});
  const Tensor same = source.Clone();
  EXPECT_TRUE(CompareTensors(source, same, Tolerance{}).passed);
  const Tensor target =
      Tensor::FromVector(DType::kInt64, Shape::Of({3}),
                         std::vector<int64_t>{top - 1, top - 1, (int64_t{1} << 62) + 1});
  const TensorComparison result = CompareTensors(source, target, Tolerance{});
  EXPECT_EQ(result.mismatches, 2);
  EXPECT_EQ(result.worst.flat, 0);  // two diffs of 1: the lower index wins
}

TEST(CompareTensors, UInt64) {
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  const Tensor source =
      Tensor::FromVector(DType::kUInt64, Shape::Of({3}), std::vector<uint64_t>{top, top, 0});
  const Tensor target =
      Tensor::FromVector(DType::kUInt64, Shape::Of({3}), std::vector<uint64_t>{top, top - 1, 0});
  const TensorComparison result = CompareTensors(source, target, Tolerance{});
  EXPECT_EQ(result.mismatches, 1);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(
      result.failures[0],
      "1 of 3 elements (33.3%) differ (integer and bool outputs compare exactly); worst at [1]: "
      "source 18446744073709551615, target 18446744073709551614 (|diff| 1)");
}

// The same 64 bits are -1 as int64 and 2^64 - 1 as uint64.
TEST(CompareTensors, Int64MinusOneIsNotUInt64Max) {
  const Tensor source = Tensor::FromVector(DType::kInt64, Shape::Of({1}), std::vector<int64_t>{-1});
  const Tensor target = Tensor::FromVector(
      DType::kUInt64, Shape::Of({1}), std::vector<uint64_t>{std::numeric_limits<uint64_t>::max()});
  const TensorComparison result = CompareTensors(source, target, Tolerance{});
  EXPECT_EQ(result.mismatches, 1);
  EXPECT_EQ(result.worst.abs_error, 0x1.0p64);
}

TEST(CompareTensors, StatisticsOfASmallCase) {
  // |diff| = 0, 0.5, 1, 2 (exact in float32); source 0 uses the relative-error floor.
  const Tensor source = MakeTensor(DType::kFloat32, Shape::Of({2, 2}), {0, 1, -2, 4});
  const Tensor target = MakeTensor(DType::kFloat32, Shape::Of({2, 2}), {0, 1.5, -3, 6});
  const TensorComparison result = CompareTensors(source, target, Tolerance{0.75, 0.0});
  EXPECT_EQ(result.source_desc, "float32[2, 2]");
  EXPECT_EQ(result.errors.compared, 4);
  EXPECT_EQ(result.errors.max_abs_error, 2.0);
  EXPECT_EQ(result.errors.mean_abs_error, 0.875);
  EXPECT_EQ(result.errors.max_rel_error, 0.5);
  EXPECT_EQ(result.errors.mean_rel_error, (0.5 + 0.5 + 0.5) / 4);
  // numpy.percentile([0, 0.5, 1, 2], [50, 75, 90, 99, 99.5]).
  const double expected[] = {0.75, 1.25, 1.7, 1.97, 1.985};
  for (size_t idx = 0; idx < std::size(expected); ++idx) {
    EXPECT_DOUBLE_EQ(result.errors.abs_error_percentiles[idx], expected[idx]) << idx;
  }
  EXPECT_EQ(result.errors.max_abs.index, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(result.errors.max_abs.source, 4.0);
  EXPECT_EQ(result.errors.max_abs.target, 6.0);
  EXPECT_EQ(result.errors.max_abs.allowed, 0.75);
  EXPECT_EQ(result.mismatches, 2);
  EXPECT_EQ(result.mismatch_fraction, 0.5);
  EXPECT_EQ(result.worst.flat, 3);  // 2 / 0.75 beats 1 / 0.75
  EXPECT_EQ(result.source_values.min, -2.0);
  EXPECT_EQ(result.source_values.max, 4.0);
  EXPECT_EQ(result.source_values.mean, 0.75);
  EXPECT_EQ(result.target_values.mean, 1.125);
}

TEST(CompareTensors, ValueSummariesCountNonFinite) {
  const Tensor source = MakeTensor(DType::kFloat32, Shape::Of({5}), {kNaN, kInf, -kInf, -kInf, 2});
  const Tensor target = MakeTensor(DType::kFloat32, Shape::Of({5}), {kNaN, kNaN, kNaN, kNaN, kNaN});
  const TensorComparison result = CompareTensors(source, target, Tolerance{});
  EXPECT_EQ(result.source_values.finite, 1);
  EXPECT_EQ(result.source_values.nan, 1);
  EXPECT_EQ(result.source_values.pos_inf, 1);
  EXPECT_EQ(result.source_values.neg_inf, 2);
  EXPECT_EQ(result.source_values.min, 2.0);
  EXPECT_EQ(result.target_values.finite, 0);
  EXPECT_EQ(result.target_values.min, 0.0);  // none finite
  EXPECT_EQ(result.non_finite.shared_nan, 1);
  EXPECT_EQ(result.non_finite.inherited, 3);  // Inf in the source, NaN in the target
  EXPECT_EQ(result.non_finite.introduced_nan, 1);
  EXPECT_EQ(result.non_finite.first_introduced, 4);
  EXPECT_EQ(result.errors.compared, 0);
  EXPECT_EQ(result.errors.max_abs.flat, -1);
}

// Chunk boundaries (4096 elements) must not change anything: one mismatch in each chunk.
TEST(CompareTensors, LargeTensorAcrossChunks) {
  std::vector<double> source(10000, 1.0);
  std::vector<double> target(10000, 1.0);
  target[4095] = 1.5;
  target[4096] = 2.0;
  target[9999] = kNaN;
  const TensorComparison result =
      CompareTensors(MakeTensor(DType::kFloat64, Shape::Of({100, 100}), source),
                     MakeTensor(DType::kFloat64, Shape::Of({100, 100}), target), Tolerance{});
  EXPECT_EQ(result.mismatches, 3);
  EXPECT_EQ(result.errors.compared, 9999);
  EXPECT_EQ(result.errors.max_abs.flat, 4096);
  EXPECT_EQ(result.worst.flat, 9999);
  EXPECT_EQ(result.worst.index, (std::vector<int64_t>{99, 99}));
  EXPECT_EQ(result.non_finite.first_introduced_nan, 9999);
}

}  // namespace
}  // namespace convgate::compare
