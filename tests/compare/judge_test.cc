// Table tests of every policy knob applied by Judge, on comparisons CompareTensors made, and of
// judging from the error summary (what `convgate check` does) including indeterminate verdicts.
#include "convgate/compare/judge.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace convgate::compare {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor MakeTensor(DType dtype, const std::vector<double>& values) {
  Tensor tensor =
      std::move(Tensor::Allocate(dtype, Shape::Of({static_cast<int64_t>(values.size())})).value());
  for (size_t idx = 0; idx < values.size(); ++idx) {
    tensor.SetDouble(static_cast<int64_t>(idx), values[idx]);
  }
  return tensor;
}

// 1000 float32 ones; the target has the last 10 at 1.01 (|diff| and rel error ~0.01).
// Elementwise at the defaults: 10 mismatches = 10000 ppm. max |diff| 0.01, mean 1e-4, median 0,
// p99 1e-4, p99.5 0.01; cosine 0.9999995; SNR 60 dB.
struct Data {
  std::vector<double> source = std::vector<double>(1000, 1.0);
  std::vector<double> target;
  Data() {
    target = source;
    for (size_t idx = 990; idx < 1000; ++idx) target[idx] = 1.01;
  }
};

TensorComparison Compare(DType dtype, const std::vector<double>& source,
                         const std::vector<double>& target, DType target_dtype) {
  return CompareTensors(MakeTensor(dtype, source), MakeTensor(target_dtype, target), Tolerance{});
}

struct JudgeCase {
  std::string name;
  std::function<void(OutputPolicy&)> policy;
  bool passed;
  std::vector<std::string> failures;  // each expected as a substring, in order
  std::vector<std::string> notes = {};
};

OutputPolicy Resolve(const std::function<void(OutputPolicy&)>& edit) {
  OutputPolicy policy;  // atol 1e-5, rtol 1e-3, elementwise, 0 ppm
  if (edit) edit(policy);
  return policy;
}

void ExpectJudgement(const JudgeCase& c, const Judgement& judgement) {
  EXPECT_EQ(judgement.passed, c.passed) << c.name;
  ASSERT_EQ(judgement.failures.size(), c.failures.size()) << c.name << ": " << [&] {
    std::string all;
    for (const std::string& failure : judgement.failures) all += "\n  " + failure;
    return all;
  }();
  for (size_t idx = 0; idx < c.failures.size(); ++idx) {
    EXPECT_NE(judgement.failures[idx].find(c.failures[idx]), std::string::npos)
        << c.name << "\n  got: " << judgement.failures[idx];
  }
  for (const std::string& note : c.notes) {
    bool found = false;
    for (const std::string& got : judgement.notes) found |= got.find(note) != std::string::npos;
    EXPECT_TRUE(found) << c.name << ": no note containing '" << note << "'";
  }
}

ErrorStat Stat(const char* text) { return ParseErrorStat(text).value(); }

TEST(Judge, EveryKnobOnFloatData) {
  const Data data;
  const TensorComparison cmp = Compare(DType::kFloat32, data.source, data.target, DType::kFloat32);
  const JudgeCase cases[] = {
      {"elementwise default", nullptr, false, {"10 of 1000 elements (1%) outside atol 1e-05"}},
      {"ppm allows exactly 10000",
       [](OutputPolicy& p) { p.mismatch_ppm = 10000; },
       true,
       {},
       {"10 of 1000 elements (1%) (10000 ppm) outside tolerance, within the allowed 10000 ppm"}},
      {"ppm just below",
       [](OutputPolicy& p) { p.mismatch_ppm = 9999; },
       false,
       {"10000 ppm of elements outside tolerance > allowed 9999 ppm",
        "10 of 1000 elements (1%) outside atol"}},
      {"max fails",
       [](OutputPolicy& p) { p.check_error_stat = Stat("max"); },
       false,
       {"max |diff| 0.01 > atol 1e-05 and max rel 0.01 > rtol 0.001 (--check-error-stat max)"}},
      {"max passes on rtol",
       [](OutputPolicy& p) {
         p.check_error_stat = Stat("max");
         p.rtol = 0.02;
       },
       true,
       {},
       {"judged by max (--check-error-stat max): max rel 0.01 <= rtol 0.02"}},
      {"mean passes on rtol",
       [](OutputPolicy& p) { p.check_error_stat = Stat("mean"); },
       true,
       {},
       {"mean rel 0.0001 <= rtol 0.001"}},
      {"mean fails",
       [](OutputPolicy& p) {
         p.check_error_stat = Stat("mean");
         p.rtol = 1e-5;
       },
       false,
       {"mean |diff| 0.0001 > atol 1e-05 and mean rel 0.0001 > rtol 1e-05"}},
      {"median passes",
       [](OutputPolicy& p) { p.check_error_stat = Stat("median"); },
       true,
       {},
       {"median |diff| 0 <= atol 1e-05"}},
      {"p99 fails at tight rtol",
       [](OutputPolicy& p) {
         p.check_error_stat = Stat("p99");
         p.rtol = 1e-5;
       },
       false,
       {"p99 |diff| 0.0001 > atol 1e-05 and p99 rel 0.0001 > rtol 1e-05"}},
      {"p99.5 fails",
       [](OutputPolicy& p) { p.check_error_stat = Stat("p99.5"); },
       false,
       {"p99.5 |diff| 0.01 > atol 1e-05 and p99.5 rel 0.01 > rtol 0.001"}},
      {"min_cosine passes",
       [](OutputPolicy& p) {
         p.min_cosine = 0.999;
         p.mismatch_ppm = 1e6;
       },
       true,
       {}},
      {"min_cosine fails",
       [](OutputPolicy& p) {
         p.min_cosine = 0.9999999;
         p.mismatch_ppm = 1e6;
       },
       false,
       {"cosine 0.9999995 < min 0.9999999"}},
      {"min_snr_db passes",
       [](OutputPolicy& p) {
         p.min_snr_db = 50;
         p.mismatch_ppm = 1e6;
       },
       true,
       {}},
      {"min_snr_db fails",
       [](OutputPolicy& p) {
         p.min_snr_db = 70;
         p.mismatch_ppm = 1e6;
       },
       false,
       {"SNR 60 dB < min 70 dB"}},
      {"floors add to the tolerance failure",
       [](OutputPolicy& p) { p.min_snr_db = 70; },
       false,
       {"10 of 1000 elements", "SNR 60 dB < min 70 dB"}},
  };
  const Tensor source = MakeTensor(DType::kFloat32, data.source);
  const Tensor target = MakeTensor(DType::kFloat32, data.target);
  for (const JudgeCase& c : cases) {
    // As the gate does: exact percentiles from the tensors for a median or pNN policy.
    const OutputPolicy policy = Resolve(c.policy);
    const double q = policy.check_error_stat.Quantile();
    std::optional<ErrorStatValues> exact;
    if (q >= 0 && q < 100) exact = ComputeErrorPercentiles(source, target, q);
    const Judgement judgement = Judge(cmp, policy, exact);
    ExpectJudgement(c, judgement);
    EXPECT_TRUE(judgement.exact) << c.name;  // every value above is stored exactly
    EXPECT_FALSE(judgement.indeterminate) << c.name;
  }
}

TEST(Judge, ExactComparisonsIgnoreTolerancesButHonourPpm) {
  const TensorComparison cmp = Compare(DType::kInt32, {1, 2, 3, 4}, {1, 2, 3, 5}, DType::kInt32);
  const JudgeCase cases[] = {
      {"exact mismatch fails", nullptr, false, {"1 of 4 elements (25%) differ"}},
      {"atol does not apply", [](OutputPolicy& p) { p.atol = 10; }, false, {"differ"}},
      {"a statistic does not apply",
       [](OutputPolicy& p) { p.check_error_stat = Stat("max"); },
       false,
       {"differ"},
       {"check_error_stat does not apply"}},
      {"ppm does",
       [](OutputPolicy& p) { p.mismatch_ppm = 250000; },
       true,
       {},
       {"within the allowed 250000 ppm"}},
      {"floors do not apply",
       [](OutputPolicy& p) {
         p.min_cosine = 1;
         p.mismatch_ppm = 1e6;
       },
       true,
       {},
       {"min_cosine and min_snr_db not judged: integer"}},
  };
  for (const JudgeCase& c : cases) ExpectJudgement(c, Judge(cmp, Resolve(c.policy)));
}

TEST(Judge, IntroducedNaNAndStructureFailWhateverThePolicy) {
  const TensorComparison nan =
      Compare(DType::kFloat32, {1, 2, 3, 4}, {1, kNaN, 3, 4}, DType::kFloat32);
  const TensorComparison dtype = Compare(DType::kInt64, {1, 2}, {1, 2}, DType::kInt32);
  const auto everything_allowed = [](OutputPolicy& p) {
    p.mismatch_ppm = 1e6;
    p.atol = 1e9;
  };
  const auto max_stat = [](OutputPolicy& p) {
    p.check_error_stat = ParseErrorStat("max").value();
    p.atol = 1e9;
  };
  for (const auto& edit : {std::function<void(OutputPolicy&)>(everything_allowed),
                           std::function<void(OutputPolicy&)>(max_stat)}) {
    ExpectJudgement({"introduced NaN", edit, false, {"introduced NaN: 1 of 4 elements"}},
                    Judge(nan, Resolve(edit)));
    ExpectJudgement({"dtype", edit, false, {"dtype mismatch: source int64, target int32"}},
                    Judge(dtype, Resolve(edit)));
  }
}

// A floating-point width change (an fp16 model without keep-IO-types) is compared by value and
// noted; --strict-dtype makes it a failure. Values are judged either way.
TEST(Judge, AFloatingWidthChangeIsNotedUnlessStrict) {
  const TensorComparison same = Compare(DType::kFloat32, {1, 2}, {1, 2}, DType::kFloat16);
  const TensorComparison off = Compare(DType::kFloat32, {1, 2}, {1, 2.5}, DType::kFloat16);
  const TensorComparison bf16 = Compare(DType::kBFloat16, {1, 2}, {1, 2}, DType::kFloat32);
  const std::string noted = "dtype changed: source float32, target float16";
  ExpectJudgement({"width, by value", nullptr, true, {}, {noted, "--strict-dtype"}},
                  Judge(same, Resolve(nullptr)));
  ExpectJudgement({"width, values off", nullptr, false, {"1 of 2 elements"}, {noted}},
                  Judge(off, Resolve(nullptr)));
  ExpectJudgement({"bfloat16 source", nullptr, true, {}, {"source bfloat16, target float32"}},
                  Judge(bf16, Resolve(nullptr)));
  const auto strict = [](OutputPolicy& p) { p.strict_dtype = true; };
  ExpectJudgement({"strict", strict, false, {"dtype mismatch: source float32, target float16"}},
                  Judge(same, Resolve(strict)));
}

TEST(Judge, InheritedNonFiniteIsHeldToPpm) {
  const TensorComparison cmp = Compare(DType::kFloat32, {kNaN, 2}, {1, 2}, DType::kFloat32);
  const JudgeCase cases[] = {
      {"inherited fails", nullptr, false, {"inherited non-finite: 1 of 2 elements"}},
      {"within ppm",
       [](OutputPolicy& p) { p.mismatch_ppm = 500000; },
       true,
       {},
       {"inherited non-finite: 1 of 2 elements"}},
      {"under a statistic too",
       [](OutputPolicy& p) { p.check_error_stat = Stat("max"); },
       false,
       {"inherited non-finite"}},
  };
  for (const JudgeCase& c : cases) ExpectJudgement(c, Judge(cmp, Resolve(c.policy)));
}

// Re-judging: values the comparison does not keep exactly come from its error summary.
TEST(Judge, NewToleranceIsRecountedFromTheErrorSummary) {
  const Data data;
  const TensorComparison cmp = Compare(DType::kFloat32, data.source, data.target, DType::kFloat32);
  // Every |diff| is at most max|diff|, so an atol above it passes, exactly.
  Judgement loose = Judge(cmp, Resolve([](OutputPolicy& p) { p.atol = 0.02; }));
  EXPECT_TRUE(loose.passed);
  EXPECT_TRUE(loose.exact);
  // The frontier keeps the 10 pairs off by 0.00999999 (each within a 0.1% box): 10 outside of
  // 0.005, and of 0.0099 too, counted exactly.
  for (double atol : {0.005, 0.0099}) {
    Judgement judged = Judge(cmp, Resolve([atol](OutputPolicy& p) {
                               p.atol = atol;
                               p.rtol = 0;
                             }));
    EXPECT_FALSE(judged.passed) << atol;
    EXPECT_FALSE(judged.indeterminate) << atol;
    EXPECT_TRUE(judged.exact) << atol;
    EXPECT_EQ(judged.mismatches.lo, 10) << atol;
    EXPECT_EQ(judged.mismatches.hi, 10) << atol;
    ASSERT_FALSE(judged.failures.empty());
    EXPECT_NE(judged.failures[0].find("10 of 1000 elements (1%) outside atol " +
                                      std::string(atol == 0.005 ? "0.005" : "0.0099") +
                                      " + rtol 0 * |source| (recounted from the report's error "
                                      "summary)"),
              std::string::npos)
        << judged.failures[0];
  }
  // 0.0099999 lies inside the box of 0.00999999 (0.1% wide): the summary cannot decide.
  Judgement close = Judge(cmp, Resolve([](OutputPolicy& p) {
                            p.atol = 0.0099999;
                            p.rtol = 0;
                          }));
  EXPECT_FALSE(close.passed);
  EXPECT_TRUE(close.indeterminate);
  EXPECT_FALSE(close.exact);
  ASSERT_FALSE(close.failures.empty());
  EXPECT_EQ(close.failures[0].rfind("indeterminate: between 0 and 10 of 1000 elements", 0), 0u)
      << close.failures[0];
  EXPECT_NE(close.failures[0].find("re-run `convgate compare`"), std::string::npos);
}

// More pairs outside than the frontier keeps: the count is bracketed by the joint cells (1/4
// octave around 0.01), raised to the frontier's kMaxFrontierPoints (24) surely outside.
TEST(Judge, ManyMismatchesAreBracketedByTheJointCells) {
  std::vector<double> source(1000, 1.0);
  std::vector<double> target = source;
  for (size_t idx = 900; idx < 1000; ++idx) target[idx] = 1.01;
  const TensorComparison cmp = Compare(DType::kFloat32, source, target, DType::kFloat32);
  ASSERT_EQ(cmp.summary.frontier.depth(), kMaxFrontierPoints);
  const auto judge = [&](double ppm) {
    return Judge(cmp, Resolve([ppm](OutputPolicy& p) {
                   p.atol = 0.0099;
                   p.rtol = 0;
                   p.mismatch_ppm = ppm;
                 }));
  };
  const Judgement some_allowed = judge(50000);  // 50 allowed, between 24 and 100 outside
  EXPECT_TRUE(some_allowed.indeterminate);
  EXPECT_EQ(some_allowed.mismatches.lo, kMaxFrontierPoints);
  EXPECT_EQ(some_allowed.mismatches.hi, 100);
  const Judgement few_allowed = judge(20000);  // 20 allowed: at least 24 are outside
  EXPECT_FALSE(few_allowed.passed);
  EXPECT_FALSE(few_allowed.indeterminate);
  const Judgement all_allowed = judge(100000);  // 100 allowed
  EXPECT_TRUE(all_allowed.passed);
  EXPECT_FALSE(all_allowed.indeterminate);
}

// p99.5 rel is not stored: the rel-error quantile ladder brackets it within 1/64 (its bucket is
// [0.0098877, 0.0100098) around 0.00999999). Every element differs here (the 990 others by one
// float32 ulp), so the frontier does not hold them all and the ladder answers.
TEST(Judge, RelativePercentileFromTheQuantileLadder) {
  Data data;
  for (size_t idx = 0; idx < 990; ++idx) data.target[idx] = 1.0000001;
  const TensorComparison cmp = Compare(DType::kFloat32, data.source, data.target, DType::kFloat32);
  ASSERT_FALSE(cmp.summary.frontier.complete());
  auto judge = [&](double rtol) {
    return Judge(cmp, Resolve([rtol](OutputPolicy& p) {
                   p.check_error_stat = ParseErrorStat("p99.5").value();
                   p.atol = 0;
                   p.rtol = rtol;
                 }));
  };
  const Judgement below = judge(0.0098);
  EXPECT_FALSE(below.passed);
  EXPECT_FALSE(below.indeterminate);
  EXPECT_FALSE(below.exact);
  const Judgement above = judge(0.0101);
  EXPECT_TRUE(above.passed);
  const Judgement inside = judge(0.0099);
  EXPECT_FALSE(inside.passed);
  EXPECT_TRUE(inside.indeterminate);
  ASSERT_EQ(inside.failures.size(), 1u);
  EXPECT_NE(inside.failures[0].find("p99.5 rel in ["), std::string::npos) << inside.failures[0];
  // With the exact values (a fresh compare has the tensors) the same policy is decided.
  const std::optional<ErrorStatValues> exact = ComputeErrorPercentiles(
      MakeTensor(DType::kFloat32, data.source), MakeTensor(DType::kFloat32, data.target), 99.5);
  ASSERT_TRUE(exact.has_value());
  EXPECT_NEAR(exact->rel_error, 0.01, 1e-6);
  const Judgement decided = Judge(cmp, Resolve([](OutputPolicy& p) {
                                    p.check_error_stat = ParseErrorStat("p99.5").value();
                                    p.atol = 0;
                                    p.rtol = 0.0099;
                                  }),
                                  exact);
  EXPECT_FALSE(decided.passed);
  EXPECT_FALSE(decided.indeterminate);
  EXPECT_TRUE(decided.exact);
}

// Only 10 elements differ: the frontier holds every one of them, in 0.1% boxes, and answers the
// percentile itself: 0.0099 is decided, 0.0099999 (inside the box of 0.00999999) is not.
TEST(Judge, RelativePercentileFromACompleteFrontier) {
  const Data data;
  const TensorComparison cmp = Compare(DType::kFloat32, data.source, data.target, DType::kFloat32);
  ASSERT_TRUE(cmp.summary.frontier.complete());
  auto judge = [&](double rtol) {
    return Judge(cmp, Resolve([rtol](OutputPolicy& p) {
                   p.check_error_stat = ParseErrorStat("p99.5").value();
                   p.atol = 0;
                   p.rtol = rtol;
                 }));
  };
  const Judgement below = judge(0.0099);
  EXPECT_FALSE(below.passed);
  EXPECT_FALSE(below.indeterminate);
  const Judgement inside = judge(0.0099999);
  EXPECT_FALSE(inside.passed);
  EXPECT_TRUE(inside.indeterminate);
  EXPECT_TRUE(judge(0.01001).passed);
}

TEST(ComputeErrorPercentiles, MatchesTheStoredAbsolutePercentiles) {
  const Data data;
  const Tensor source = MakeTensor(DType::kFloat32, data.source);
  const Tensor target = MakeTensor(DType::kFloat32, data.target);
  const TensorComparison cmp = CompareTensors(source, target, Tolerance{});
  for (size_t idx = 0; idx < std::size(kPercentiles); ++idx) {
    EXPECT_EQ(ComputeErrorPercentiles(source, target, kPercentiles[idx])->abs_error,
              cmp.errors.abs_error_percentiles[idx])
        << kPercentiles[idx];
  }
  EXPECT_FALSE(ComputeErrorPercentiles(MakeTensor(DType::kFloat32, {kNaN}),
                                       MakeTensor(DType::kFloat32, {1.0}), 50)
                   .has_value());
}

}  // namespace
}  // namespace convgate::compare

namespace convgate::compare {
namespace {

// A source whose energy lies within atol's reach (a detector map of ~4e-6 on noise) that float16
// rounds to exactly 0: cosine reads 0 and SNR 0 dB, yet every element is within tolerance. Such
// floors are undefined, never failures; a source with energy above atol is still held to them.
TEST(JudgeFloors, UndefinedWhereTheSourceIsWithinAtolOfZero) {
  const std::vector<double> source(100, 4.4e-6);
  const std::vector<double> zeros(100, 0.0);
  const TensorComparison cmp = CompareTensors(MakeTensor(DType::kFloat32, source),
                                              MakeTensor(DType::kFloat32, zeros), Tolerance{});
  OutputPolicy policy;
  policy.atol = 2.5e-3;
  policy.min_cosine = 0.9995;
  policy.min_snr_db = 30.0;
  const Judgement judged = Judge(cmp, policy);
  EXPECT_TRUE(judged.passed);
  EXPECT_TRUE(judged.failures.empty());
  EXPECT_EQ(judged.floors_undefined,
            "cosine and SNR undefined: max |source| 4.4e-06 <= atol 0.0025");
  policy.atol = 1e-6;  // now the source's energy is above atol: the floors apply and fail
  const Judgement held = Judge(cmp, policy);
  EXPECT_FALSE(held.passed);
  EXPECT_TRUE(held.floors_undefined.empty());
  ASSERT_GE(held.failures.size(), 2u);
  EXPECT_NE(held.failures[held.failures.size() - 2].find("cosine 0 < min 0.9995"),
            std::string::npos);
}

TEST(JudgeFloors, ErrorsAreMultiplesOfTheNoiseFloor) {
  const TensorComparison cmp =
      CompareTensors(MakeTensor(DType::kFloat32, {1.0, 2.0, 3.0}),
                     MakeTensor(DType::kFloat32, {1.0, 2.0031, 3.0}), Tolerance{});
  OutputPolicy policy;
  policy.atol = 2e-2;
  policy.noise_floor = 1e-3;
  const Judgement judged = Judge(cmp, policy);
  EXPECT_TRUE(judged.passed);
  ASSERT_TRUE(judged.floor_multiple.has_value());
  EXPECT_NEAR(*judged.floor_multiple, 3.1, 1e-3);
  EXPECT_NE(std::string(judged.notes.back()).find("is 3.1x the noise floor 0.001"),
            std::string::npos)
      << judged.notes.back();
  policy.noise_floor = 0.0;  // a deterministic source: no multiple to give
  EXPECT_FALSE(Judge(cmp, policy).floor_multiple.has_value());
}

}  // namespace
}  // namespace convgate::compare
