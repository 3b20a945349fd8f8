// Per-tensor noise floors (PerNodeOptions::calibrate) through the library, on ONNX Runtime and the
// examples' tinycnn: every matched tensor gets the floor the source measures against itself under
// a benign change (graph optimization disabled, one thread) and its error as a multiple of it; a
// default atol rises to kNoiseFloorFactor x the floor, a set one does not; an injected fault stays
// far past its floor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "convgate/compare/noise_floor.h"
#include "convgate/gate/workflows.h"
#include "testing/subprocess.h"

namespace convgate::gate {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = fs::path(CONVGATE_BINARY_DIR) / "examples";

class PerNodeCalibrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("convgate_calibrate_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static CompareOptions Options(const fs::path& target, bool calibrate) {
    CompareOptions options;
    options.source = (kExamples / "tinycnn.onnx").string();
    options.target = target.string();
    options.per_node.enabled = true;
    options.per_node.calibrate = calibrate;
    options.data.generate.samples = 2;
    options.data.generate.shape_per_input["image"] = Shape::Of({2, 3, 16, 16});
    // Inputs in [0, 255], as an image model is fed: activations reach magnitudes where the
    // summation order shows.
    options.data.generate.range = inputs::ValueRange{0.0, 255.0};
    return options;
  }

  std::string Inject(const std::string& fault, const std::string& factor) {
    const fs::path out = dir_ / (fault + ".onnx");
    testing::ProcessResult r =
        testing::RunProcess({(fs::path(CONVGATE_BINARY_DIR) / "convgate-inject-fault").string(),
                             (kExamples / "tinycnn.onnx").string(), out.string(), "--fault", fault,
                             "--factor", factor});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return out.string();
  }

  fs::path dir_;
};

TEST_F(PerNodeCalibrateTest, EveryTensorGetsItsFloorAndItsErrorAsAMultipleOfIt) {
  const CompareReport report = CompareModelsGate(Options(kExamples / "tinycnn_converted.onnx",
                                                         /*calibrate=*/true));
  ASSERT_FALSE(report.error) << report.error->status.ToString();
  ASSERT_TRUE(report.per_node);
  const PerNodeReport& per_node = *report.per_node;
  EXPECT_NE(per_node.calibration.find("graph optimization disabled (the gate's: extended)"),
            std::string::npos)
      << per_node.calibration;
  ASSERT_FALSE(per_node.nodes.empty());
  for (const NodeCheck& node : per_node.nodes) {
    ASSERT_TRUE(node.noise_floor.has_value()) << node.tensor;
    EXPECT_EQ(node.noise_floor->samples, 2) << node.tensor;
    EXPECT_EQ(node.status, NodeStatus::kPassed) << node.tensor;
    for (const NodeSampleResult& sample : node.samples) {
      EXPECT_GE(sample.floor_multiple, 0.0) << node.tensor;
      // The faithful conversion stays within the factor of its floor or within the default.
      EXPECT_TRUE(sample.floor_multiple <= compare::kNoiseFloorFactor ||
                  sample.max_abs_error <= 1e-5 + 1e-3 * std::max(std::abs(sample.source_min),
                                                                 std::abs(sample.source_max)))
          << node.tensor << " " << sample.floor_multiple;
      // A default atol rose to the floor's reach, never fell below the default.
      EXPECT_GE(sample.atol, 1e-5) << node.tensor;
      EXPECT_GE(sample.atol, compare::kNoiseFloorFactor * node.noise_floor->max_abs * 0.999999)
          << node.tensor;
    }
  }
  // Without calibration no floor is measured or reported.
  const CompareReport plain =
      CompareModelsGate(Options(kExamples / "tinycnn_converted.onnx", /*calibrate=*/false));
  ASSERT_TRUE(plain.per_node);
  EXPECT_TRUE(plain.per_node->calibration.empty());
  for (const NodeCheck& node : plain.per_node->nodes) {
    EXPECT_FALSE(node.noise_floor.has_value());
    for (const NodeSampleResult& sample : node.samples) EXPECT_EQ(sample.floor_multiple, -1.0);
  }
}

TEST_F(PerNodeCalibrateTest, AFaultStaysFarPastItsFloorAndASetToleranceIsKept) {
  CompareOptions options = Options(Inject("perturb-conv", "1.05"), /*calibrate=*/true);
  CompareReport report = CompareModelsGate(options);
  ASSERT_FALSE(report.error) << report.error->status.ToString();
  ASSERT_TRUE(report.per_node);
  const PerNodeReport& per_node = *report.per_node;
  ASSERT_GE(per_node.first_divergent, 0);
  const NodeCheck& conv = per_node.nodes[per_node.first_divergent];
  EXPECT_EQ(conv.node, "Conv_conv");
  EXPECT_EQ(per_node.culprit, per_node.first_divergent);
  for (const NodeSampleResult& sample : conv.samples) {
    EXPECT_GT(sample.floor_multiple, 100 * compare::kNoiseFloorFactor) << sample.max_abs_error;
  }
  // --atol set by the user is the user's: the floor does not raise it.
  options.policy.global.atol = 1e-9;
  report = CompareModelsGate(options);
  ASSERT_TRUE(report.per_node);
  for (const NodeCheck& node : report.per_node->nodes) {
    for (const NodeSampleResult& sample : node.samples) EXPECT_EQ(sample.atol, 1e-9);
  }
}

}  // namespace
}  // namespace convgate::gate
