// String inputs: never generated, validated like any dtype, loaded from and saved to every layout
// (numpy str arrays in .npz files, string_data in ONNX test cases).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "convgate/inputs/dataset.h"
#include "inputs/test_util.h"

namespace convgate::inputs {
namespace {

namespace fs = std::filesystem;
using test_util::Fix;
using test_util::Input;
using test_util::MakeSignature;
using test_util::Sym;
using ::testing::HasSubstr;

Signature TextModel() {
  return MakeSignature({
      Input("text", DType::kString, {Sym("batch"), Fix(2)}),
      Input("scale", DType::kFloat32, {}),
  });
}

Tensor Strings(Shape shape, std::vector<std::string> values) {
  return std::move(Tensor::FromStrings(std::move(shape), std::move(values)).value());
}

Dataset TextDataset(int samples) {
  Dataset dataset;
  dataset.origin = "text.npz";
  for (int sample_idx = 0; sample_idx < samples; ++sample_idx) {
    TensorMap sample;
    sample.InsertOrAssign("text", Strings(Shape::Of({1, 2}),
                                          {"monday " + std::to_string(sample_idx), "K\xC3\xB6ln"}));
    sample.InsertOrAssign("scale", Tensor::FromVector<float>(DType::kFloat32, Shape(), {0.5f}));
    dataset.samples.push_back(std::move(sample));
  }
  return dataset;
}

void ExpectSame(const Dataset& actual, const Dataset& expected) {
  ASSERT_EQ(actual.samples.size(), expected.samples.size());
  for (size_t sample_idx = 0; sample_idx < expected.samples.size(); ++sample_idx) {
    for (const TensorMap::Entry& entry : expected.samples[sample_idx]) {
      const Tensor* tensor = actual.samples[sample_idx].Find(entry.name);
      ASSERT_NE(tensor, nullptr) << entry.name;
      EXPECT_TRUE(tensor->BitwiseEquals(entry.tensor)) << entry.name << " " << sample_idx;
    }
  }
}

class StringInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("convgate_strings_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST(StringInputs, AreNeverGenerated) {
  Result<Dataset> dataset = GenerateDataset(TextModel(), InputOptions());
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(dataset.status().message(),
            "cannot generate values for string input 'text': give them with --load-inputs (an "
            ".npz of a numpy str array, or an ONNX test-case folder)");
}

TEST(StringInputs, ValidateLikeAnyDType) {
  Dataset dataset = TextDataset(1);
  EXPECT_TRUE(ValidateDataset(dataset, TextModel()).ok());

  Dataset numbers = TextDataset(1);
  numbers.samples[0].InsertOrAssign(
      "text", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1, 2}), {1.0f, 2.0f}));
  Status status = ValidateDataset(numbers, TextModel());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "input 'text' in text.npz is float32, the model wants string");

  Dataset wrong_shape = TextDataset(1);
  wrong_shape.samples[0].InsertOrAssign("text", Strings(Shape::Of({3}), {"a", "b", "c"}));
  status = ValidateDataset(wrong_shape, TextModel());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("has shape [3], the model wants [batch, 2]"));
}

TEST_F(StringInputsTest, RoundTripThroughEveryLayout) {
  for (int samples : {1, 2}) {
    const Dataset dataset = TextDataset(samples);
    for (const fs::path& path : {dir_ / ("inputs" + std::to_string(samples) + ".npz"),
                                 dir_ / ("case" + std::to_string(samples))}) {
      ASSERT_TRUE(SaveDataset(path, dataset, TextModel()).ok()) << path;
      Result<Dataset> loaded = LoadDataset(path, TextModel());
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      ExpectSame(*loaded, dataset);
      EXPECT_TRUE(ValidateDataset(*loaded, TextModel()).ok()) << path;
    }
  }
}

TEST_F(StringInputsTest, NpzCannotHoldBytesThatAreNotUtf8ButATestCaseCan) {
  Dataset dataset = TextDataset(1);
  dataset.samples[0].InsertOrAssign("text", Strings(Shape::Of({1, 2}), {"ok", "\xff\xfe"}));
  Status npz = SaveDataset(dir_ / "inputs.npz", dataset, TextModel());
  EXPECT_EQ(npz.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(npz.message(), HasSubstr("member 'text': element [0, 1]: not valid UTF-8"));
  ASSERT_TRUE(SaveDataset(dir_ / "case", dataset, TextModel()).ok());
  Result<Dataset> loaded = LoadDataset(dir_ / "case", TextModel());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectSame(*loaded, dataset);
}

// What a user writes by hand: np.savez with a str array and a float.
TEST_F(StringInputsTest, LoadsNumpyStrArrays) {
  const char* python = "/usr/bin/python3";
  if (std::system((std::string(python) + " -c 'import numpy' 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << python << " with numpy is not available";
  }
  const fs::path script = dir_ / "make.py";
  std::ofstream(script) << "import sys, numpy as np\n"
                           "text = np.array([['monday 0', 'K\\u00f6ln']])\n"
                           "np.savez(sys.argv[1], text=text, scale=np.float32(0.5))\n";
  const std::string command =
      std::string(python) + " " + script.string() + " " + (dir_ / "inputs.npz").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  Result<Dataset> loaded = LoadDataset(dir_ / "inputs.npz", TextModel());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(ValidateDataset(*loaded, TextModel()).ok());
  ExpectSame(*loaded, TextDataset(1));
}

}  // namespace
}  // namespace convgate::inputs
