// Outputs the inputs did not exercise: constant on every sample, or saturated at 0/1.
#include "gate/input_coverage.h"

#include <gtest/gtest.h>

namespace convgate::gate::internal {
namespace {

TensorMap Outputs(const std::vector<float>& map, const std::vector<float>& probs) {
  TensorMap outputs;
  outputs.Append("map", Tensor::FromVector<float>(
                            DType::kFloat32, Shape::Of({static_cast<int64_t>(map.size())}), map));
  outputs.Append("probs",
                 Tensor::FromVector<float>(DType::kFloat32,
                                           Shape::Of({static_cast<int64_t>(probs.size())}), probs));
  outputs.Append("loss", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {0.5f}));
  return outputs;
}

TEST(InputCoverageTest, FindsConstantAndSaturatedOutputs) {
  CoverageTracker coverage;
  coverage.Add(Outputs({0, 0, 0}, {0, 1, 0}));
  coverage.Add(Outputs({0, 0, 0}, {1, 0, 0}));
  const std::vector<std::string> findings = coverage.Findings();
  ASSERT_EQ(findings.size(), 2u);  // the scalar loss is constant by nature
  EXPECT_EQ(findings[0], "output 'map' is 0 on every element of every sample");
  EXPECT_NE(findings[1].find("'probs' is saturated"), std::string::npos) << findings[1];
}

TEST(InputCoverageTest, AnOutputThatVariesOnceIsCovered) {
  CoverageTracker coverage;
  coverage.Add(Outputs({2, 2, 2}, {0.2f, 0.8f, 0}));
  coverage.Add(Outputs({2, 2, 3}, {0, 1, 0}));
  EXPECT_TRUE(coverage.Findings().empty());
  CoverageTracker constant_across;
  constant_across.Add(Outputs({2, 2, 2}, {0.1f, 0.9f, 0}));
  constant_across.Add(Outputs({3, 3, 3}, {0.1f, 0.9f, 0}));  // each sample constant, not all
  EXPECT_TRUE(constant_across.Findings().empty());
}

// A map of 4e-6 on noise is not constant, but within atol of 0 on every sample: the same sign.
TEST(InputCoverageTest, FindsOutputsWithinAtolOfZeroEverywhere) {
  CoverageTracker coverage;
  coverage.Add(Outputs({1e-6f, 4e-6f, 0}, {0.2f, 0.8f, 0}));
  std::vector<OutputCheck> checks(2);
  for (OutputCheck& check : checks) {
    check.output = "map";
    check.tolerance.atol = 0.04;
    check.floors_undefined = "max |source| 4e-06 <= atol 0.04";
    check.comparison.emplace();
    check.comparison->values_compared = true;
    check.comparison->source_values.max = 4e-6;
  }
  const std::vector<std::string> findings = coverage.Findings(checks);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0],
            "output 'map' stays within atol 0.04 of 0 on every sample (max |source| 4e-06)");
  checks[1].floors_undefined.clear();  // one sample had energy
  EXPECT_TRUE(coverage.Findings(checks).empty());
}

}  // namespace
}  // namespace convgate::gate::internal
