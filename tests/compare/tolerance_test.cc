#include <gtest/gtest.h>

#include <string>

#include "convgate/compare/policy.h"

namespace convgate::compare {
namespace {

TEST(Policy, DefaultsAreLeapps) {
  const Policy policy;
  const Tolerance tolerance = policy.For("logits").tolerance();
  EXPECT_EQ(tolerance.atol, 1e-5);
  EXPECT_EQ(tolerance.rtol, 1e-3);
}

TEST(Policy, GlobalAndPerOutputValues) {
  Policy policy;
  ASSERT_TRUE(AddAtol("1e-4", policy).ok());
  ASSERT_TRUE(AddRtol("0.01", policy).ok());
  ASSERT_TRUE(AddAtol("logits:0.5", policy).ok());
  ASSERT_TRUE(AddRtol("probs:0", policy).ok());
  EXPECT_EQ(policy.For("other").atol, 1e-4);
  EXPECT_EQ(policy.For("other").rtol, 0.01);
  EXPECT_EQ(policy.For("logits").atol, 0.5);
  EXPECT_EQ(policy.For("logits").rtol, 0.01);  // only atol was overridden
  EXPECT_EQ(policy.For("probs").rtol, 0.0);
  EXPECT_EQ(policy.For("probs").atol, 1e-4);
}

TEST(Policy, LaterValuesWin) {
  Policy policy;
  ASSERT_TRUE(AddAtol("out:1", policy).ok());
  ASSERT_TRUE(AddAtol("out:2", policy).ok());
  ASSERT_TRUE(AddAtol("3", policy).ok());
  EXPECT_EQ(policy.For("out").atol, 2.0);
  EXPECT_EQ(policy.global.atol, 3.0);
}

// tf2onnx names tensors "input:0": the name ends at the last ':'.
TEST(Policy, NamesMayContainColons) {
  Policy policy;
  ASSERT_TRUE(AddAtol("input:0:1e-4", policy).ok());
  ASSERT_TRUE(AddRtol("scope/x:0:2e-3", policy).ok());
  EXPECT_EQ(policy.per_output.count("input:0"), 1u);
  EXPECT_EQ(policy.For("input:0").atol, 1e-4);
  EXPECT_EQ(policy.For("scope/x:0").rtol, 2e-3);
  EXPECT_EQ(policy.For("input").atol, 1e-5);
}

TEST(Policy, AcceptsNumberSpellings) {
  for (const char* text : {"0", "1", "1e-4", "1E-4", ".5", "2.5e+3", "out:0.001"}) {
    Policy policy;
    EXPECT_TRUE(AddAtol(text, policy).ok()) << text;
  }
}

struct BadTolerance {
  const char* text;
  const char* message;
};

TEST(Policy, RejectsBadValuesQuotingTheText) {
  const BadTolerance cases[] = {
      {"-1e-3", "invalid atol '-1e-3': tolerances must be finite and >= 0, got -1e-3"},
      {"out:-1", "invalid atol 'out:-1': tolerances must be finite and >= 0, got -1"},
      {"nan", "invalid atol 'nan': tolerances must be finite and >= 0, got nan"},
      {"x:inf", "invalid atol 'x:inf': tolerances must be finite and >= 0, got inf"},
      {"abc", "invalid atol 'abc': 'abc' is not a number"},
      {"", "invalid atol '': '' is not a number"},
      {"out:", "invalid atol 'out:': '' is not a number"},
      {"1e-4x", "invalid atol '1e-4x': '1e-4x' is not a number"},
      {" 1e-4", "invalid atol ' 1e-4': ' 1e-4' is not a number"},
      {"input:0:", "invalid atol 'input:0:': '' is not a number"},
      {":1e-4", "invalid atol ':1e-4': the output name before ':' is empty"},
  };
  for (const BadTolerance& bad : cases) {
    Policy policy;
    const Status status = AddAtol(bad.text, policy);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad.text;
    EXPECT_EQ(status.message(), bad.message);
    EXPECT_TRUE(policy.per_output.empty()) << bad.text;
    EXPECT_FALSE(policy.global.atol.has_value()) << bad.text;
  }
}

TEST(Policy, RtolErrorsNameRtol) {
  Policy policy;
  EXPECT_EQ(AddRtol("probs:-0.1", policy).message(),
            "invalid rtol 'probs:-0.1': tolerances must be finite and >= 0, got -0.1");
}

}  // namespace
}  // namespace convgate::compare
