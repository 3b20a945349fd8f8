#include "convgate/compare/agreement_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace convgate::compare {
namespace {

AgreementCheck Parse(const std::string& text) {
  Result<AgreementCheck> check = ParseAgreementCheck(text);
  EXPECT_TRUE(check.ok()) << text << ": " << check.status().ToString();
  return check.ok() ? std::move(check).value() : AgreementCheck{};
}

TEST(AgreementCheckParse, ValidChecks) {
  AgreementCheck top1 = Parse("logits:top1>=0.999");
  EXPECT_EQ(top1.output, "logits");
  EXPECT_EQ(top1.metric, AgreementMetric::kTopK);
  EXPECT_EQ(top1.k, 1);
  EXPECT_EQ(top1.op, Comparison::kGreaterEqual);
  EXPECT_EQ(top1.value, 0.999);
  EXPECT_EQ(top1.text, "logits:top1>=0.999");

  AgreementCheck top5 = Parse("logits:top5 >= 1");
  EXPECT_EQ(top5.k, 5);
  EXPECT_EQ(top5.value, 1.0);

  AgreementCheck rate = Parse("label:flip_rate<=0");
  EXPECT_EQ(rate.metric, AgreementMetric::kFlipRate);
  EXPECT_EQ(rate.op, Comparison::kLessEqual);

  AgreementCheck flips = Parse("probs:FLIPS<3");
  EXPECT_EQ(flips.metric, AgreementMetric::kFlips);
  EXPECT_EQ(flips.op, Comparison::kLess);
  EXPECT_EQ(flips.value, 3.0);

  EXPECT_EQ(Parse("p:top20>0.5").op, Comparison::kGreater);
  EXPECT_EQ(Parse("p:flips==0").op, Comparison::kEqual);
  EXPECT_EQ(Parse("label:diagonal").metric, AgreementMetric::kDiagonal);
}

// tf2onnx names tensors "logits:0": the name ends at the last ':'.
TEST(AgreementCheckParse, NamesMayContainColons) {
  AgreementCheck check = Parse("model/logits:0:top1>=0.5");
  EXPECT_EQ(check.output, "model/logits:0");
  EXPECT_EQ(check.value, 0.5);
}

TEST(AgreementCheckParse, EachErrorQuotesTheTextAndSaysWhy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"top1>=0.5", "expected NAME:METRIC"},
      {":top1>=0.5", "name before ':' is empty"},
      {"logits:accuracy>=0.5", "unknown metric 'accuracy'"},
      {"logits:top>=0.5", "positive integer k"},
      {"logits:top0>=0.5", "positive integer k"},
      {"logits:topx>=0.5", "positive integer k"},
      {"logits:top1", "needs a comparison and a value"},
      {"logits:flips", "e.g. flips<=0"},
      {"logits:top1=>0.5", "unknown comparison"},
      {"logits:top1!=0.5", "unknown comparison"},
      {"logits:top1>=", "is not a finite number"},
      {"logits:top1>=abc", "'abc' is not a finite number"},
      {"logits:top1>=0.5x", "is not a finite number"},
      {"logits:top1>=nan", "is not a finite number"},
      {"logits:top1>=1.5", "a rate is a fraction in [0, 1]"},
      {"logits:flip_rate<=-0.1", "a rate is a fraction in [0, 1]"},
      {"logits:flips<=-1", "a flip count is >= 0"},
      {"label:diagonal==1", "'diagonal' takes no comparison"},
  };
  for (const auto& [text, why] : cases) {
    Result<AgreementCheck> check = ParseAgreementCheck(text);
    ASSERT_FALSE(check.ok()) << text;
    EXPECT_EQ(check.status().code(), StatusCode::kInvalidArgument) << text;
    const std::string message = check.status().message();
    EXPECT_NE(message.find("'" + text + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << text << ": " << message;
  }
}

TEST(AgreementConfig, NamedOutputs) {
  AgreementConfig config;
  config.classifiers = {"probs", "label"};
  config.checks = {Parse("logits:top3>=0.9"), Parse("probs:top1>=1"), Parse("label:diagonal")};
  EXPECT_EQ(config.NamedOutputs(), (std::vector<std::string>{"probs", "label", "logits"}));
}

AgreementStats Stats(int64_t rows, int64_t agree) {
  AgreementStats stats;
  stats.rows = rows;
  stats.top1_agree = agree;
  stats.top_k_agree = {{5, rows}};
  stats.margin_rows = rows;
  stats.flips = rows - agree;
  stats.diagonal = {{0, agree}};
  if (rows > agree) stats.off_diagonal = {{3, 5, rows - agree - 2}, {1, 2, 2}};
  // Most frequent first, as AgreementAccumulator::Stats orders them.
  std::stable_sort(
      stats.off_diagonal.begin(), stats.off_diagonal.end(),
      [](const ConfusionCell& a, const ConfusionCell& b) { return a.count > b.count; });
  return stats;
}

TEST(AgreementCheckEvaluate, FailingTop1SaysByHowMuchAndWhatChanged) {
  AgreementVerdict verdict = EvaluateAgreementCheck(Parse("logits:top1>=0.999"), Stats(1000, 994));
  EXPECT_FALSE(verdict.passed);
  EXPECT_EQ(verdict.message,
            "output 'logits': top-1 agreement 0.9940 (994 of 1000 rows) < required 0.999; 6 rows "
            "changed prediction, most common: class 3 -> 5 (4 rows)");
}

TEST(AgreementCheckEvaluate, PassingChecks) {
  EXPECT_EQ(EvaluateAgreementCheck(Parse("logits:top5>=1"), Stats(10, 10)).message,
            "output 'logits': top-5 agreement 1.0000 (10 of 10 rows) >= required 1");
  AgreementVerdict diagonal = EvaluateAgreementCheck(Parse("label:diagonal"), Stats(10, 10));
  EXPECT_TRUE(diagonal.passed);
  EXPECT_EQ(diagonal.message, "output 'label': confusion matrix is diagonal (10 rows)");
  EXPECT_TRUE(EvaluateAgreementCheck(Parse("l:flips<=0"), Stats(10, 10)).passed);
}

TEST(AgreementCheckEvaluate, RatesPrintEnoughDecimalsToShowTheSide) {
  // 0.99996 would print as 1.0000 with four decimals, which reads as passing.
  AgreementVerdict verdict =
      EvaluateAgreementCheck(Parse("logits:top1>=0.99997"), Stats(100000, 99996));
  EXPECT_FALSE(verdict.passed);
  EXPECT_NE(verdict.message.find("top-1 agreement 0.99996 (99996 of 100000 rows) < required"),
            std::string::npos)
      << verdict.message;
}

TEST(AgreementCheckEvaluate, FlipsDiagonalAndNaN) {
  AgreementStats stats = Stats(30, 27);
  stats.kind = PredictionKind::kLabels;
  stats.nan_rows = 0;
  EXPECT_EQ(EvaluateAgreementCheck(Parse("label:flip_rate<=0"), stats).message,
            "output 'label': flip rate 0.1000 (3 of 30 rows) > allowed 0; 3 rows changed "
            "prediction, most common: label 1 -> 2 (2 rows)");
  EXPECT_EQ(EvaluateAgreementCheck(Parse("label:diagonal"), stats).message,
            "output 'label': confusion matrix is not diagonal: 3 of 30 rows off the diagonal; 3 "
            "rows changed prediction, most common: label 1 -> 2 (2 rows)");
  AgreementStats scores = Stats(4, 4);
  scores.nan_rows = 1;
  scores.flips = 1;
  scores.flip_margin = 0.25;
  AgreementVerdict flips = EvaluateAgreementCheck(Parse("p:flips<1"), scores);
  EXPECT_FALSE(flips.passed);
  EXPECT_EQ(flips.message,
            "output 'p': flips 1 (among 4 rows with a source top-1 margin > 0.25) >= allowed 1; "
            "1 row with NaN (no prediction)");
  EXPECT_FALSE(EvaluateAgreementCheck(Parse("p:diagonal"), scores).passed);
}

TEST(AgreementCheckEvaluate, AnUncountedKFails) {
  AgreementVerdict verdict = EvaluateAgreementCheck(Parse("logits:top3>=0.5"), Stats(10, 10));
  EXPECT_FALSE(verdict.passed);
  EXPECT_EQ(verdict.message, "output 'logits': top-3 agreement was not counted");
}

TEST(PredictionKindFor, NamedOutputsFollowTheirDtype) {
  const Shape shape = Shape::Of({4});
  EXPECT_EQ(PredictionKindFor("y", DType::kFloat16, shape, true), PredictionKind::kScores);
  EXPECT_EQ(PredictionKindFor("y", DType::kInt32, shape, true), PredictionKind::kLabels);
  EXPECT_EQ(PredictionKindFor("y", DType::kBool, shape, true), PredictionKind::kLabels);
  EXPECT_EQ(PredictionKindFor("y", DType::kString, shape, true), std::nullopt);
  // Named overrides the shape rules: a rank-3 output is rows x rows x classes.
  EXPECT_EQ(PredictionKindFor("y", DType::kFloat32, Shape::Of({2, 3, 4}), true),
            PredictionKind::kScores);
}

TEST(PredictionKindFor, DetectionByNameDtypeAndShape) {
  const Shape batch_by_classes = Shape::Of({8, 10});
  for (const char* name :
       {"logits", "Probabilities", "output_prob", "scores", "softmax_out", "class_scores"}) {
    EXPECT_EQ(PredictionKindFor(name, DType::kFloat32, batch_by_classes, false),
              PredictionKind::kScores)
        << name;
  }
  for (const char* name : {"label", "output_label", "classes", "PREDICTIONS", "argmax_out"}) {
    EXPECT_EQ(PredictionKindFor(name, DType::kInt64, Shape::Of({8}), false),
              PredictionKind::kLabels)
        << name;
  }
  EXPECT_EQ(PredictionKindFor("embedding", DType::kFloat32, batch_by_classes, false), std::nullopt);
  EXPECT_EQ(PredictionKindFor("ids", DType::kInt64, Shape::Of({8}), false), std::nullopt);
  EXPECT_EQ(PredictionKindFor("label", DType::kFloat32, Shape::Of({8}), false), std::nullopt);
  EXPECT_EQ(PredictionKindFor("is_label", DType::kBool, Shape::Of({8}), false), std::nullopt);
  // Scores need rank 1 or 2 and at least two classes.
  EXPECT_EQ(PredictionKindFor("logits", DType::kFloat32, Shape::Of({1, 3, 8, 8}), false),
            std::nullopt);
  EXPECT_EQ(PredictionKindFor("logits", DType::kFloat32, Shape::Of({8, 1}), false), std::nullopt);
  EXPECT_EQ(PredictionKindFor("prob", DType::kFloat32, Shape::Of({2}), false),
            PredictionKind::kScores);
  EXPECT_EQ(PredictionKindFor("logits", DType::kFloat32, Shape(), false), std::nullopt);
}

}  // namespace
}  // namespace convgate::compare
