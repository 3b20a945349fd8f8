// The run and compare workflows in-process: saved outputs on both sides (no runtime), models
// scripted on the fake backend (testing/fake_backend.h), exit codes and the hints attached to
// failures.
#include "convgate/gate/workflows.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "convgate/gate/judge.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "testing/fake_backend.h"

namespace convgate::gate {
namespace {

namespace fs = std::filesystem;

class WorkflowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("convgate_gate_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteOutputs(const std::string& file, TensorMap tensors) {
    const fs::path path = dir_ / file;
    EXPECT_TRUE(io::WriteNpz(path, tensors).ok());
    return path.string();
  }

  // model.onnx on `backends`: x[1, 4] -> logits[1, 10], probs[1, 10] (examples' tinycnn), every
  // sample answered with `outputs`.
  fs::path Classifier(testing::FakeBackendFactory& backends, TensorMap outputs) {
    const fs::path model = dir_ / "model.onnx";
    std::fclose(std::fopen(model.c_str(), "w"));
    testing::FakeModelScript script;
    script.signature.inputs = {testing::FloatInfo("x", {1, 4})};
    script.signature.outputs = {testing::FloatInfo("logits", {1, 10}),
                                testing::FloatInfo("probs", {1, 10})};
    script.runs = {testing::Returns(std::move(outputs))};
    backends.Script(model, script);
    return model;
  }

  fs::path dir_;
};

Tensor Floats(std::vector<float> values) {
  return Tensor::FromVector<float>(DType::kFloat32,
                                   Shape::Of({static_cast<int64_t>(values.size())}), values);
}

TensorMap Map(std::vector<std::pair<std::string, std::vector<float>>> entries) {
  TensorMap map;
  for (auto& [name, values] : entries) map.InsertOrAssign(name, Floats(values));
  return map;
}

// [1, 10] float32 tensors, each filled with one value.
TensorMap Map10(std::vector<std::pair<std::string, float>> entries) {
  TensorMap map;
  for (auto& [name, value] : entries) {
    map.InsertOrAssign(name, testing::FloatTensor({1, 10}, std::vector<float>(10, value)));
  }
  return map;
}

TEST(ExitCodes, FollowTheDocumentedTable) {
  const auto code = [](Verdict verdict, std::optional<GateError> error) {
    return ToInt(ExitCodeFor(verdict, error));
  };
  EXPECT_EQ(code(Verdict::kPass, std::nullopt), 0);
  EXPECT_EQ(code(Verdict::kFail, std::nullopt), 1);
  EXPECT_EQ(code(Verdict::kError, GateError{Stage::kFlags, Status::InvalidArgument("x")}), 2);
  for (Stage stage : {Stage::kLoad, Stage::kInputs, Stage::kRun, Stage::kWrite, Stage::kConvert}) {
    EXPECT_EQ(code(Verdict::kError, GateError{stage, Status::DataLoss("x")}), 3);
  }
  EXPECT_EQ(code(Verdict::kError, GateError{Stage::kRun, Status::Internal("bug")}), 4);
  EXPECT_EQ(code(Verdict::kError, GateError{Stage::kInternal, Status::DataLoss("x")}), 4);
}

TEST_F(WorkflowsTest, SavedOutputsCompareWithoutAnyModel) {
  CompareOptions options;
  options.source = WriteOutputs("a.npz", Map({{"y", {1, 2, 3}}, {"z", {0}}}));
  options.target = WriteOutputs("b.npz", Map({{"y", {1, 2, 3.5}}, {"z", {0}}}));
  CompareReport report = CompareModelsGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_EQ(report.verdict, Verdict::kFail);
  ASSERT_EQ(report.checks.size(), 2u);
  EXPECT_FALSE(report.checks[0].passed);
  EXPECT_TRUE(report.checks[1].passed);
  EXPECT_EQ(report.FirstFailure()->output, "y");
  EXPECT_EQ(report.source.kind, "outputs");
  EXPECT_EQ(report.source.sha256.size(), 64u);
  EXPECT_TRUE(report.inputs.origin.empty());
}

TEST_F(WorkflowsTest, MissingAndExtraOutputsAreStructureFailures) {
  CompareOptions options;
  options.source = WriteOutputs("a.npz", Map({{"y", {1}}, {"z", {2}}}));
  options.target = WriteOutputs("b.npz", Map({{"y", {1}}, {"w", {2}}, {"v", {3}}}));
  CompareReport report = CompareModelsGate(options);
  EXPECT_EQ(report.verdict, Verdict::kFail);
  ASSERT_EQ(report.structure_failures.size(), 3u);
  EXPECT_EQ(report.structure_failures[0],
            "output count differs: the source has 2 (y, z), the target has 3 (y, w, v)");
  EXPECT_EQ(report.structure_failures[1], "the target has an output 'w' that the source lacks");
  ASSERT_EQ(report.checks.size(), 2u);
  EXPECT_EQ(report.checks[1].failures[0],
            "missing: the target has no output 'z' (target outputs: y, w, v)");
}

TEST_F(WorkflowsTest, PositionalNpzMembersMatchTheModelsOutputsByPosition) {
  // The inputs the outputs were saved from.
  testing::FakeBackendFactory backends;
  const fs::path model = Classifier(backends, Map10({{"logits", 0.5f}, {"probs", 0.1f}}));
  TensorMap inputs;
  inputs.InsertOrAssign("x", testing::FloatTensor({1, 4}, {1, 2, 3, 4}));
  ASSERT_TRUE(io::WriteNpz(dir_ / "inputs.npz", inputs).ok());
  // np.savez(f, logits, probs) names its members arr_0 and arr_1: wrong values, right positions.
  CompareOptions options;
  options.source = WriteOutputs("positional.npz", Map10({{"arr_0", 0.0f}, {"arr_1", 0.1f}}));
  options.target = model.string();
  options.data.load_inputs = dir_ / "inputs.npz";
  options.backend_factory = &backends;
  CompareReport report = CompareModelsGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  ASSERT_EQ(report.checks.size(), 2u);
  EXPECT_EQ(report.checks[0].output, "logits");
  EXPECT_FALSE(report.checks[0].passed);
  EXPECT_EQ(report.checks[1].output, "probs");
  EXPECT_TRUE(report.checks[1].passed);
  EXPECT_EQ(report.source.output_renames,
            (std::vector<std::string>{"arr_0 -> logits", "arr_1 -> probs"}));
}

// Issue 9: an .npz of arr_0, arr_1 against a named .npz compared no name with any other.
TEST_F(WorkflowsTest, PositionalNpzMembersMatchANamedNpzByPosition) {
  CompareOptions options;
  options.source = WriteOutputs("named.npz", Map({{"y", {1, 2}}, {"z", {3}}}));
  options.target = WriteOutputs("positional.npz", Map({{"arr_0", {1, 2}}, {"arr_1", {3}}}));
  CompareReport report = CompareModelsGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_EQ(report.verdict, Verdict::kPass);
  ASSERT_EQ(report.checks.size(), 2u);
  EXPECT_EQ(report.checks[1].output, "z");
  EXPECT_EQ(report.target.output_matching, "position");
  EXPECT_EQ(report.target.output_renames, (std::vector<std::string>{"arr_0 -> y", "arr_1 -> z"}));
  EXPECT_EQ(report.source.output_matching, "name");

  // Either side may be the positional one; a count mismatch is a structure failure naming both.
  std::swap(options.source, options.target);
  EXPECT_EQ(CompareModelsGate(options).verdict, Verdict::kPass);
  options.source = WriteOutputs("three.npz", Map({{"arr_0", {1}}, {"arr_1", {2}}, {"arr_2", {3}}}));
  CompareReport mismatch = CompareModelsGate(options);
  EXPECT_EQ(mismatch.verdict, Verdict::kFail);
  ASSERT_FALSE(mismatch.structure_failures.empty());
  EXPECT_EQ(mismatch.structure_failures[0],
            "outputs cannot be matched by position: the source (three.npz) names no outputs and "
            "holds 3 (arr_0, arr_1, arr_2), the target has 2 (y, z)");
}

// Issue 9: a single saved output in an .npy was refused unless the other side was a model.
TEST_F(WorkflowsTest, ALoneNpyIsOneOutputMatchedByPosition) {
  ASSERT_TRUE(io::WriteNpy(dir_ / "a.npy", Floats({1, 2, 3})).ok());
  ASSERT_TRUE(io::WriteNpy(dir_ / "b.npy", Floats({1, 2, 3.5})).ok());
  CompareOptions options;
  options.source = (dir_ / "a.npy").string();
  options.target = (dir_ / "b.npy").string();
  CompareReport report = CompareModelsGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_EQ(report.verdict, Verdict::kFail);
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_EQ(report.checks[0].output, "a");  // the target took the source's name
  EXPECT_FALSE(report.checks[0].passed);
  options.target = options.source;
  EXPECT_EQ(CompareModelsGate(options).verdict, Verdict::kPass);
  // Against an .npz of one named tensor, the .npy takes its name.
  options.target = WriteOutputs("one.npz", Map({{"logits", {1, 2, 3}}}));
  CompareReport named = CompareModelsGate(options);
  EXPECT_EQ(named.verdict, Verdict::kPass);
  EXPECT_EQ(named.checks[0].output, "logits");
  EXPECT_EQ(named.source.output_renames, (std::vector<std::string>{"a -> logits"}));
  // Against two outputs it cannot be paired: a structure failure, not a load error.
  options.target = WriteOutputs("two.npz", Map({{"y", {1}}, {"z", {2}}}));
  CompareReport two = CompareModelsGate(options);
  ASSERT_FALSE(two.error.has_value()) << two.error->status.ToString();
  EXPECT_EQ(two.verdict, Verdict::kFail);
  ASSERT_FALSE(two.structure_failures.empty());
  EXPECT_NE(two.structure_failures[0].find("the source (a.npy) names no outputs and holds 1 (a)"),
            std::string::npos)
      << two.structure_failures[0];
}

// Issue 9: two empty .npz files "passed" with 0 of 0 checks.
TEST_F(WorkflowsTest, AComparisonThatComparesNothingFails) {
  CompareOptions options;
  options.source = WriteOutputs("empty.npz", TensorMap());
  options.target = options.source;
  CompareReport report = CompareModelsGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_EQ(report.verdict, Verdict::kFail);
  EXPECT_EQ(ExitCodeFor(report.verdict, report.error), ExitCode::kFailed);
  ASSERT_EQ(report.structure_failures.size(), 1u);
  EXPECT_EQ(report.structure_failures[0].rfind("nothing was compared: neither the source", 0), 0u)
      << report.structure_failures[0];
}

TEST_F(WorkflowsTest, SampleCountsOfSavedOutputsMustMatch) {
  TensorMap two;
  two.InsertOrAssign("sample_0/y", Floats({1}));
  two.InsertOrAssign("sample_1/y", Floats({1}));
  CompareOptions options;
  options.source = WriteOutputs("two.npz", std::move(two));
  options.target = WriteOutputs("one.npz", Map({{"y", {1}}}));
  CompareReport report = CompareModelsGate(options);
  ASSERT_TRUE(report.error.has_value());
  EXPECT_EQ(report.error->stage, Stage::kInputs);
  EXPECT_NE(report.error->status.message().find(
                "holds outputs of 1 sample, but 2 samples are being compared"),
            std::string::npos)
      << report.error->status.message();
}

TEST_F(WorkflowsTest, AnUnknownPathKindIsAUsageError) {
  const fs::path text = dir_ / "notes.txt";
  std::FILE* file = std::fopen(text.c_str(), "w");
  std::fclose(file);
  RunOptions options;
  options.model = text;
  RunReport report = RunModelGate(options);
  ASSERT_TRUE(report.error.has_value());
  EXPECT_EQ(report.error->stage, Stage::kFlags);
  RunOptions missing;
  missing.model = dir_ / "absent.onnx";
  EXPECT_EQ(RunModelGate(missing).error->stage, Stage::kLoad);
}

TEST_F(WorkflowsTest, RunChecksEveryOutputOfEverySample) {
  testing::FakeBackendFactory backends;
  const fs::path model = Classifier(backends, Map10({{"logits", 0.5f}, {"probs", 0.1f}}));
  RunOptions options;
  options.model = model;
  options.data.generate.samples = 2;
  options.backend_factory = &backends;
  RunReport clean = RunModelGate(options);
  ASSERT_FALSE(clean.error.has_value()) << clean.error->status.ToString();
  EXPECT_EQ(clean.verdict, Verdict::kPass);
  EXPECT_EQ(clean.checks.size(), 4u);
  EXPECT_EQ(clean.model.backend, "ort");  // from the .onnx extension
  EXPECT_EQ(clean.model.backend_version, "fake-1");
  EXPECT_EQ(backends.created(), (std::vector<std::string>{"ort"}));

  // A model whose first output is all NaN (examples' tinycnn_nan).
  Classifier(backends, Map10({{"logits", std::nanf("")}, {"probs", 0.1f}}));
  RunReport nan = RunModelGate(options);
  EXPECT_EQ(nan.verdict, Verdict::kFail);
  ASSERT_EQ(nan.checks.size(), 4u);
  EXPECT_EQ(nan.checks[0].values.nan, 10);
  EXPECT_FALSE(nan.checks[0].passed);
  EXPECT_TRUE(nan.checks[1].passed);
}

TEST(Hints, SuggestTheLargestToleranceOverSamples) {
  std::vector<OutputCheck> checks(2);
  const compare::Tolerance tolerance{1e-5, 1e-3};
  for (int sample = 0; sample < 2; ++sample) {
    checks[sample].sample = sample;
    checks[sample].output = "y";
    checks[sample].comparison = compare::CompareTensors(
        Floats({1.0f, 2.0f}), Floats({1.0f, sample == 0 ? 2.01f : 2.05f}), tolerance);
    JudgeCheck(checks[sample], nullptr, nullptr);
  }
  AttachHints(checks);
  ASSERT_FALSE(checks[0].hints.empty());
  EXPECT_EQ(checks[0].hints, checks[1].hints);
  // 0.04999995 - 0.002 = 0.04799995 is needed by sample 1. The suggestion is what the comparison's
  // error summary proves (its frontier boxes are 0.1% wide, so up to 0.04805), rounded up to two
  // digits: `convgate check` then decides it too.
  EXPECT_NE(checks[0].hints[0].find("--atol y:0.049 "), std::string::npos) << checks[0].hints[0];
  EXPECT_NE(checks[0].hints[1].find("widespread"), std::string::npos) << checks[0].hints[1];
}

}  // namespace
}  // namespace convgate::gate

namespace convgate::gate {
namespace {

TEST_F(WorkflowsTest, AggregatesNameTheFirstFailingAndWorstSamples) {
  TensorMap source, target;
  for (int sample = 0; sample < 3; ++sample) {
    const std::string key = "sample_" + std::to_string(sample) + "/y";
    source.InsertOrAssign(key, Floats({1, 2, 3}));
    // Sample 1 is off by 0.5, sample 2 by 0.1; sample 0 is exact.
    const float delta = sample == 1 ? 0.5f : (sample == 2 ? 0.1f : 0.0f);
    target.InsertOrAssign(key, Floats({1, 2, 3 + delta}));
  }
  CompareOptions options;
  options.source = WriteOutputs("s.npz", std::move(source));
  options.target = WriteOutputs("t.npz", std::move(target));
  CompareReport report = CompareModelsGate(options);
  ASSERT_EQ(report.aggregates.size(), 1u);
  const OutputAggregate& row = report.aggregates[0];
  EXPECT_EQ(row.samples, 3);
  EXPECT_EQ(row.failed_samples, 2);
  EXPECT_EQ(row.first_failing_sample, 1);
  EXPECT_EQ(row.worst_sample, 1);
  EXPECT_NEAR(row.max_abs_error, 0.5, 1e-6);
  EXPECT_NEAR(row.mean_abs_error, 0.6 / 9, 1e-6);
  EXPECT_EQ(row.mismatches, 2);
  EXPECT_EQ(row.elements, 9);
}

}  // namespace
}  // namespace convgate::gate
