#include "convgate/io/test_case.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "convgate/io/tensor_proto.h"
#include "io/io_test_util.h"

namespace convgate::io {
namespace {

namespace fs = std::filesystem;
using testing::PatternTensor;
using testing::TempDir;

const fs::path kOnnxNodeTests = "/usr/share/libonnx-testdata/data/node";

TensorMap TwoTensors(std::string_view first, std::string_view second, uint32_t seed) {
  TensorMap tensors;
  EXPECT_TRUE(
      tensors.Insert(std::string(first), PatternTensor(DType::kFloat32, Shape::Of({2}), seed))
          .ok());
  EXPECT_TRUE(
      tensors.Insert(std::string(second), PatternTensor(DType::kInt64, Shape::Of({3}), seed + 1))
          .ok());
  return tensors;
}

void ExpectSameTensors(const TensorMap& actual, const TensorMap& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t idx = 0; idx < expected.size(); ++idx) {
    EXPECT_TRUE(actual[idx].tensor.BitwiseEquals(expected[idx].tensor)) << expected[idx].name;
  }
}

TEST(TestCase, WritesAndReadsDataSetsInNumericOrder) {
  TempDir dir;
  // Eleven sets so that test_data_set_10 must sort after test_data_set_9, not after _1.
  for (int index = 0; index < 11; ++index) {
    const uint32_t seed = static_cast<uint32_t>(10 * index);
    ASSERT_TRUE(WriteTestDataSet(dir.path(), index, TwoTensors("a", "b", seed),
                                 TwoTensors("y", "z", seed + 5))
                    .ok());
  }
  EXPECT_TRUE(IsTestCasePath(dir.path()));
  Result<std::vector<TestDataSet>> sets = ReadTestCase(dir.path(), {});
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_EQ(sets->size(), 11u);
  for (int index = 0; index < 11; ++index) {
    const TestDataSet& set = (*sets)[index];
    EXPECT_EQ(set.dir.filename(), "test_data_set_" + std::to_string(index));
    const uint32_t seed = static_cast<uint32_t>(10 * index);
    EXPECT_EQ(set.inputs.Names(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(set.outputs.Names(), (std::vector<std::string>{"y", "z"}));
    ExpectSameTensors(set.inputs, TwoTensors("a", "b", seed));
    ExpectSameTensors(set.outputs, TwoTensors("y", "z", seed + 5));
  }
}

TEST(TestCase, ReadsOneDataSetFolderAndSkipsOutputsOnRequest) {
  TempDir dir;
  ASSERT_TRUE(
      WriteTestDataSet(dir.path(), 3, TwoTensors("a", "b", 1), TwoTensors("y", "z", 2)).ok());
  const fs::path set_dir = dir / "test_data_set_3";
  EXPECT_TRUE(IsTestCasePath(set_dir));
  Result<std::vector<TestDataSet>> sets = ReadTestCase(set_dir, {}, /*load_outputs=*/false);
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_EQ(sets->size(), 1u);
  EXPECT_EQ((*sets)[0].inputs.size(), 2u);
  EXPECT_TRUE((*sets)[0].outputs.empty());
  // A trailing slash names the same folder.
  EXPECT_TRUE(IsTestCasePath(set_dir.string() + "/"));
}

TEST(TestCase, NamesComeFromTheModelThenTheProtoThenThePosition) {
  TempDir dir;
  const fs::path set_dir = dir / "test_data_set_0";
  fs::create_directories(set_dir);
  for (int idx = 0; idx < 3; ++idx) {
    const std::string name = idx == 1 ? "" : "proto_" + std::to_string(idx);
    ASSERT_TRUE(WriteTensorProto(set_dir / ("input_" + std::to_string(idx) + ".pb"),
                                 PatternTensor(DType::kInt8, Shape::Of({1})), name)
                    .ok());
  }
  ASSERT_TRUE(
      WriteTensorProto(set_dir / "output_0.pb", PatternTensor(DType::kBool, Shape()), "").ok());
  TestCaseNames names;
  names.inputs = {"model_0"};  // shorter than the files
  Result<std::vector<TestDataSet>> sets = ReadTestCase(dir.path(), names);
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  EXPECT_EQ((*sets)[0].inputs.Names(), (std::vector<std::string>{"model_0", "input_1", "proto_2"}));
  EXPECT_EQ((*sets)[0].outputs.Names(), (std::vector<std::string>{"output_0"}));
}

TEST(TestCase, RewritingWithFewerTensorsRemovesStaleFiles) {
  TempDir dir;
  ASSERT_TRUE(
      WriteTestDataSet(dir.path(), 0, TwoTensors("a", "b", 1), TwoTensors("y", "z", 2)).ok());
  TensorMap one;
  ASSERT_TRUE(one.Insert("only", PatternTensor(DType::kUInt8, Shape::Of({2}))).ok());
  ASSERT_TRUE(WriteTestDataSet(dir.path(), 0, one, TensorMap()).ok());
  EXPECT_FALSE(fs::exists(dir / "test_data_set_0" / "input_1.pb"));
  EXPECT_FALSE(fs::exists(dir / "test_data_set_0" / "output_0.pb"));
  Result<std::vector<TestDataSet>> sets = ReadTestCase(dir.path(), {});
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  EXPECT_EQ((*sets)[0].inputs.Names(), (std::vector<std::string>{"only"}));
  EXPECT_TRUE((*sets)[0].outputs.empty());
  EXPECT_EQ(WriteTestDataSet(dir.path(), -1, one, one).code(), StatusCode::kInvalidArgument);
}

// --save-inputs and --save-outputs to one folder write the two halves separately: neither may
// delete the other's files as stale.
TEST(TestCase, WritingOneHalfLeavesTheOtherAsItIs) {
  TempDir dir;
  EXPECT_FALSE(TestCaseHolds(dir.path(), TestCasePart::kInputs));
  const TensorMap inputs = TwoTensors("a", "b", 1);
  const TensorMap outputs = TwoTensors("y", "z", 2);
  ASSERT_TRUE(WriteTestDataSetPart(dir.path(), 0, TestCasePart::kInputs, inputs).ok());
  EXPECT_TRUE(TestCaseHolds(dir.path(), TestCasePart::kInputs));
  EXPECT_FALSE(TestCaseHolds(dir.path(), TestCasePart::kOutputs));
  ASSERT_TRUE(WriteTestDataSetPart(dir.path(), 0, TestCasePart::kOutputs, outputs).ok());
  EXPECT_TRUE(TestCaseHolds(dir / "test_data_set_0", TestCasePart::kOutputs));
  Result<std::vector<TestDataSet>> sets = ReadTestCase(dir.path(), {});
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ExpectSameTensors((*sets)[0].inputs, inputs);
  ExpectSameTensors((*sets)[0].outputs, outputs);

  // Rewriting the inputs with fewer tensors drops only input_1.pb.
  TensorMap one;
  ASSERT_TRUE(one.Insert("only", PatternTensor(DType::kUInt8, Shape::Of({2}))).ok());
  ASSERT_TRUE(WriteTestDataSetPart(dir.path(), 0, TestCasePart::kInputs, one).ok());
  EXPECT_FALSE(fs::exists(dir / "test_data_set_0" / "input_1.pb"));
  EXPECT_TRUE(fs::exists(dir / "test_data_set_0" / "output_1.pb"));
  // An empty half removes every file of that half, and only of it.
  ASSERT_TRUE(WriteTestDataSetPart(dir.path(), 0, TestCasePart::kOutputs, TensorMap()).ok());
  EXPECT_FALSE(TestCaseHolds(dir.path(), TestCasePart::kOutputs));
  EXPECT_TRUE(fs::exists(dir / "test_data_set_0" / "input_0.pb"));
  EXPECT_EQ(WriteTestDataSetPart(dir.path(), -1, TestCasePart::kInputs, one).code(),
            StatusCode::kInvalidArgument);
}

TEST(TestCase, FindsTheModelBesideTheDataSets) {
  TempDir dir;
  ASSERT_TRUE(WriteTestDataSet(dir.path(), 0, TwoTensors("a", "b", 1), {}).ok());
  EXPECT_EQ(TestCaseModelPath(dir.path()), fs::path());
  testing::WriteAll(dir / "model.onnx", "not really a model");
  EXPECT_EQ(TestCaseModelPath(dir.path()), dir / "model.onnx");
  EXPECT_EQ(TestCaseModelPath(dir / "test_data_set_0"), dir / "model.onnx");
  EXPECT_EQ(TestCaseModelPath((dir / "test_data_set_0").string() + "/"), dir / "model.onnx");
}

TEST(TestCase, RejectsBrokenFolders) {
  TempDir dir;
  EXPECT_FALSE(IsTestCasePath(dir.path()));
  EXPECT_FALSE(IsTestCasePath(dir / "missing"));
  EXPECT_EQ(ReadTestCase(dir / "missing", {}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadTestCase(dir.path(), {}).status().code(), StatusCode::kNotFound);

  // An empty data set.
  fs::create_directories(dir / "test_data_set_0");
  Status empty = ReadTestCase(dir.path(), {}).status();
  EXPECT_EQ(empty.code(), StatusCode::kDataLoss);
  EXPECT_NE(empty.message().find("test_data_set_0"), std::string::npos) << empty.ToString();

  // A gap in the numbering.
  const Tensor tensor = PatternTensor(DType::kFloat32, Shape::Of({1}));
  ASSERT_TRUE(WriteTensorProto(dir / "test_data_set_0" / "input_0.pb", tensor, "").ok());
  ASSERT_TRUE(WriteTensorProto(dir / "test_data_set_0" / "input_2.pb", tensor, "").ok());
  Status gap = ReadTestCase(dir.path(), {}).status();
  EXPECT_EQ(gap.code(), StatusCode::kDataLoss);
  EXPECT_NE(gap.message().find("input_2.pb"), std::string::npos) << gap.ToString();

  // Two files giving the same name.
  fs::remove(dir / "test_data_set_0" / "input_2.pb");
  ASSERT_TRUE(WriteTensorProto(dir / "test_data_set_0" / "input_1.pb", tensor, "input_0").ok());
  Status duplicate = ReadTestCase(dir.path(), {}).status();
  EXPECT_EQ(duplicate.code(), StatusCode::kDataLoss);
  EXPECT_NE(duplicate.message().find("input_1.pb"), std::string::npos) << duplicate.ToString();

  // A corrupt .pb: the error names the file.
  testing::WriteAll(dir / "test_data_set_0" / "input_1.pb", "\xff\xff\xff");
  Status corrupt = ReadTestCase(dir.path(), {}).status();
  EXPECT_EQ(corrupt.code(), StatusCode::kDataLoss);
  EXPECT_NE(corrupt.message().find("input_1.pb"), std::string::npos) << corrupt.ToString();
}

TEST(TestCase, ReadsRealOnnxTestData) {
  if (!fs::is_directory(kOnnxNodeTests)) GTEST_SKIP() << "libonnx-testdata is not installed";
  const struct {
    std::string_view name;
    std::vector<DType> inputs;
    std::vector<Shape> input_shapes;
    std::vector<DType> outputs;
  } cases[] = {
      {"test_abs", {DType::kFloat32}, {Shape::Of({3, 4, 5})}, {DType::kFloat32}},
      {"test_add_bcast",
       {DType::kFloat32, DType::kFloat32},
       {Shape::Of({3, 4, 5}), Shape::Of({5})},
       {DType::kFloat32}},
      {"test_and2d",
       {DType::kBool, DType::kBool},
       {Shape::Of({3, 4}), Shape::Of({3, 4})},
       {DType::kBool}},
      {"test_argmax_default_axis_example", {DType::kFloat32}, {Shape::Of({2, 2})}, {DType::kInt64}},
      {"test_cast_FLOAT_to_FLOAT16", {DType::kFloat32}, {Shape::Of({3, 4})}, {DType::kFloat16}},
  };
  for (const auto& c : cases) {
    const fs::path case_dir = kOnnxNodeTests / c.name;
    ASSERT_TRUE(IsTestCasePath(case_dir)) << c.name;
    EXPECT_EQ(TestCaseModelPath(case_dir), case_dir / "model.onnx");
    Result<std::vector<TestDataSet>> sets = ReadTestCase(case_dir, {});
    ASSERT_TRUE(sets.ok()) << sets.status().ToString();
    ASSERT_FALSE(sets->empty());
    const TestDataSet& set = (*sets)[0];
    ASSERT_EQ(set.inputs.size(), c.inputs.size()) << c.name;
    for (size_t idx = 0; idx < c.inputs.size(); ++idx) {
      EXPECT_EQ(set.inputs[idx].tensor.dtype(), c.inputs[idx]) << c.name;
      EXPECT_EQ(set.inputs[idx].tensor.shape(), c.input_shapes[idx]) << c.name;
    }
    ASSERT_EQ(set.outputs.size(), c.outputs.size()) << c.name;
    for (size_t idx = 0; idx < c.outputs.size(); ++idx) {
      EXPECT_EQ(set.outputs[idx].tensor.dtype(), c.outputs[idx]) << c.name;
    }
  }
}

TEST(TestCase, RealSequenceAndOptionalCasesAreUnimplemented) {
  if (!fs::is_directory(kOnnxNodeTests)) GTEST_SKIP() << "libonnx-testdata is not installed";
  for (std::string_view name :
       {"test_sequence_insert_at_back", "test_identity_opt", "test_optional_get_element_sequence",
        "test_loop13_seq", "test_optional_has_element_empty"}) {
    Status status = ReadTestCase(kOnnxNodeTests / name, {}).status();
    EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << status.ToString();
    EXPECT_NE(status.message().find(".pb"), std::string::npos) << status.ToString();
    EXPECT_NE(status.message().find("not a tensor"), std::string::npos) << status.ToString();
  }
}

}  // namespace
}  // namespace convgate::io
