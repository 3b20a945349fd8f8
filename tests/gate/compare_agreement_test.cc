// The compare workflow's agreement hook (AgreementTracker): which outputs it measures, how it
// accumulates over samples, and how checks on outputs it could not measure fail.
#include "gate/compare_agreement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace convgate::gate::internal {
namespace {

Tensor Scores(std::vector<int64_t> dims, std::vector<float> values) {
  return Tensor::FromVector(DType::kFloat32, Shape::Make(std::move(dims)).value(), values);
}

// Tensor is move-only, so an initializer list cannot hold them: chain With() instead.
TensorMap With(TensorMap map, const std::string& name, Tensor tensor) {
  EXPECT_TRUE(map.Insert(name, std::move(tensor)).ok());
  return map;
}

TensorMap Strings(const std::string& name) {
  return With({}, name, Tensor::FromStrings(Shape::Of({1}), {"cat"}).value());
}

compare::AgreementConfig Config(std::vector<std::string> checks,
                                std::vector<std::string> classifiers = {}) {
  compare::AgreementConfig config;
  config.classifiers = std::move(classifiers);
  for (const std::string& text : checks) {
    config.checks.push_back(compare::ParseAgreementCheck(text).value());
  }
  return config;
}

TEST(AgreementTracker, DetectsClassifierOutputsAndSkipsTheRest) {
  AgreementTracker tracker(Config({}));
  TensorMap outputs = With({}, "logits", Scores({1, 3}, {0, 2, 1}));
  outputs = With(std::move(outputs), "embedding", Scores({1, 3}, {0, 2, 1}));
  outputs = With(std::move(outputs), "label",
                 Tensor::FromVector(DType::kInt64, Shape::Of({1}), std::vector<int64_t>{1}));
  tracker.Add(outputs, outputs);
  std::vector<AgreementRecord> records = tracker.Finish();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].output, "logits");
  EXPECT_EQ(records[0].selected_by, "detected");
  EXPECT_EQ(records[0].stats.kind, compare::PredictionKind::kScores);
  EXPECT_EQ(records[1].output, "label");
  EXPECT_EQ(records[1].stats.kind, compare::PredictionKind::kLabels);
  EXPECT_TRUE(records[0].checks.empty());
}

TEST(AgreementTracker, AccumulatesOverSamplesAndJudgesChecks) {
  AgreementTracker tracker(Config({"out:top1>=0.5", "out:top3>=1", "out:diagonal"}));
  const TensorMap agree = With({}, "out", Scores({1, 4}, {0, 0, 1, 0}));
  const TensorMap flipped = With({}, "out", Scores({1, 4}, {0, 1, 0.5, 0}));
  tracker.Add(agree, agree);
  tracker.Add(agree, flipped);
  std::vector<AgreementRecord> records = tracker.Finish();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].selected_by, "named");  // "out" matches no detection word
  EXPECT_EQ(records[0].stats.rows, 2);
  EXPECT_EQ(records[0].stats.TopKAgree(3), 2);  // the checked k is counted
  ASSERT_EQ(records[0].checks.size(), 3u);
  EXPECT_TRUE(records[0].checks[0].passed) << records[0].checks[0].message;
  EXPECT_TRUE(records[0].checks[1].passed) << records[0].checks[1].message;
  EXPECT_FALSE(records[0].checks[2].passed);
  EXPECT_EQ(records[0].checks[2].check, "out:diagonal");
}

TEST(AgreementTracker, ChecksOnOutputsThatCannotBeMeasuredFail) {
  AgreementTracker tracker(Config({"names:diagonal", "logits:top1>=0", "gone:top1>=0"}));
  TensorMap first = With(Strings("names"), "logits", Scores({1, 2}, {0, 1}));
  TensorMap second = With(Strings("names"), "logits", Scores({1, 3}, {0, 1, 2}));
  tracker.Add(first, first);
  tracker.Add(second, second);
  std::vector<AgreementRecord> records = tracker.Finish();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].error, "a string tensor holds neither class scores nor labels");
  EXPECT_NE(records[1].error.find("sample 1: the class axis has 3 entries"), std::string::npos)
      << records[1].error;
  EXPECT_EQ(records[2].output, "gone");
  EXPECT_EQ(records[2].error, "no sample had an output 'gone' on both sides");
  for (const AgreementRecord& record : records) {
    ASSERT_EQ(record.checks.size(), 1u);
    EXPECT_FALSE(record.checks[0].passed);
    EXPECT_NE(record.checks[0].message.find("agreement not counted"), std::string::npos);
  }
}

TEST(AgreementTracker, NamesNeitherSideHasAreUsageErrors) {
  AgreementTracker tracker(Config({"logit:diagonal"}, {"probs"}));
  SideRecord source, target;
  source.output_names = {"logits"};
  target.output_names = {"probs"};
  std::optional<GateError> error = tracker.CheckNames(source, target);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->stage, Stage::kFlags);
  EXPECT_NE(error->status.message().find("output 'logit', which neither side has"),
            std::string::npos);
  target.output_names.push_back("logit");
  EXPECT_FALSE(tracker.CheckNames(source, target).has_value());
}

}  // namespace
}  // namespace convgate::gate::internal
