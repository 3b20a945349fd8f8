// Where --save-inputs and --save-outputs may write (session/save_paths.h): every refusal is a
// usage error naming the flag, and the two legitimate ways to fill one test case folder are
// allowed.
#include "convgate/session/save_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "convgate/io/test_case.h"

namespace convgate::session {
namespace {

namespace fs = std::filesystem;

class SavePathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("convgate_save_paths_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A test case folder holding one half of a data set.
  fs::path TestCaseWith(const std::string& name, io::TestCasePart part) {
    TensorMap tensors;
    tensors.InsertOrAssign("t", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {1}));
    EXPECT_TRUE(io::WriteTestDataSetPart(dir_ / name, 0, part, tensors).ok());
    return dir_ / name;
  }

  // The error's message, or "" when the paths are accepted.
  static std::string Refusal(const DataOptions& options, const std::vector<ReadPath>& read = {}) {
    std::optional<GateError> error = CheckSavePaths(options, read);
    if (!error) return "";
    EXPECT_EQ(error->stage, Stage::kFlags);
    EXPECT_EQ(error->status.code(), StatusCode::kInvalidArgument);
    return error->status.message();
  }

  fs::path dir_;
};

TEST_F(SavePathsTest, OneNpzCannotHoldInputsAndOutputs) {
  DataOptions options;
  options.save_inputs = dir_ / "data.npz";
  options.save_outputs = dir_ / "./data.npz";
  EXPECT_NE(Refusal(options).find("both name"), std::string::npos) << Refusal(options);
  options.save_outputs = dir_ / "outputs.npz";
  EXPECT_EQ(Refusal(options), "");
}

TEST_F(SavePathsTest, OneFolderHoldsBothAsATestCase) {
  DataOptions options;
  options.save_inputs = dir_ / "case";
  options.save_outputs = dir_ / "case/";
  EXPECT_EQ(Refusal(options), "");
  // Run again into the folder they filled: still one run's inputs and outputs.
  TestCaseWith("case", io::TestCasePart::kInputs);
  TestCaseWith("case", io::TestCasePart::kOutputs);
  EXPECT_EQ(Refusal(options), "");
}

TEST_F(SavePathsTest, AnNpyCannotHoldADataset) {
  DataOptions options;
  options.save_outputs = dir_ / "y.npy";
  EXPECT_NE(Refusal(options).find("--save-outputs " + (dir_ / "y.npy").string() + ": an .npy"),
            std::string::npos)
      << Refusal(options);
}

TEST_F(SavePathsTest, NothingThisRunReadsIsOverwritten) {
  DataOptions options;
  options.load_inputs = dir_ / "in.npz";
  options.save_outputs = dir_ / "in.npz";
  EXPECT_NE(Refusal(options).find("the outputs would replace them"), std::string::npos)
      << Refusal(options);
  options.save_outputs.reset();
  options.save_inputs = dir_ / "in.npz";
  EXPECT_NE(Refusal(options).find("--load-inputs"), std::string::npos) << Refusal(options);
  DataOptions source;
  source.save_outputs = dir_ / "ref.npz";
  EXPECT_NE(
      Refusal(source, {{"the source", dir_ / "ref.npz"}}).find("is the source this run reads"),
      std::string::npos);
}

TEST_F(SavePathsTest, OutputsGoBesideTheInputsTheyWereComputedFrom) {
  const fs::path inputs_only = TestCaseWith("case", io::TestCasePart::kInputs);
  DataOptions options;
  options.save_outputs = inputs_only;
  // Generated inputs: the folder's input_K.pb did not produce these outputs.
  EXPECT_NE(Refusal(options).find("already holds inputs (input_K.pb) that this run did not use"),
            std::string::npos)
      << Refusal(options);
  options.load_inputs = inputs_only;
  EXPECT_EQ(Refusal(options), "");
}

TEST_F(SavePathsTest, NewInputsAreNotPairedWithOldOutputs) {
  const fs::path outputs_only = TestCaseWith("case", io::TestCasePart::kOutputs);
  DataOptions options;
  options.save_inputs = outputs_only;
  EXPECT_NE(Refusal(options).find("already holds outputs (output_K.pb)"), std::string::npos)
      << Refusal(options);
  options.save_outputs = outputs_only;  // this run's outputs replace them
  EXPECT_EQ(Refusal(options), "");
}

TEST_F(SavePathsTest, AFolderOfNpyFilesIsNotTurnedIntoATestCase) {
  fs::create_directories(dir_ / "npys");
  std::ofstream(dir_ / "npys" / "x.npy") << "not read";
  DataOptions options;
  options.save_inputs = dir_ / "npys";
  EXPECT_NE(Refusal(options).find("holds .npy files"), std::string::npos) << Refusal(options);
}

}  // namespace
}  // namespace convgate::session
