// `convgate transform` on a real torchvision export: resnet18 exported at opset 13 with its
// BatchNorms kept (resnet18_bn_opset13.onnx, randomized statistics) by
// scripts/make_torch_fixtures.sh. fold_batchnorm must validate; the wrong fold must not.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/onnx_test_util.h"
#include "testing/subprocess.h"
#include "testing/torch_fixtures.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;

const fs::path kBinary = fs::path(CONVGATE_BINARY_DIR) / "src/cli/convgate";

std::string Describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

class TransformTorchCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !CONVGATE_WITH_TORCH
    GTEST_SKIP() << "built without libtorch (CONVGATE_WITH_TORCH=OFF)";
#endif
    std::string error;
    model_ = (fs::path(testing::TorchFixtureFolder(error)) / "resnet18_bn_opset13.onnx").string();
    ASSERT_TRUE(error.empty()) << error;
  }

  ProcessResult Transform(const std::string& pass, const std::string& output) {
    ProcessResult result =
        testing::RunProcess({kBinary.string(), "transform", model_, "--pass", pass, "-o",
                             (dir_.path() / output).string(), "--validate", "--json"});
    EXPECT_EQ(result.signal, 0) << "convgate crashed; stderr:\n" << result.err;
    return result;
  }

  std::string model_;
  testing::ScopedTempDir dir_;
};

TEST_F(TransformTorchCliTest, FoldBatchNormOnResnet18Validates) {
  ProcessResult r = Transform("fold_batchnorm", "folded.onnx");
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json record = nlohmann::json::parse(r.out);
  // resnet18 has 20 BatchNorms, each after a Conv.
  EXPECT_EQ(record["passes"][0]["counts"]["changed"], 20) << r.out;
  EXPECT_EQ(record["passes"][0]["counts"]["removed"], 20) << r.out;
  EXPECT_EQ(record["validation"]["verdict"], "pass");
}

TEST_F(TransformTorchCliTest, WrongFoldOnResnet18FailsValidation) {
  ProcessResult r = Transform("fold_batchnorm_wrong_for_tests", "wrong.onnx");
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
}

}  // namespace
}  // namespace convgate
