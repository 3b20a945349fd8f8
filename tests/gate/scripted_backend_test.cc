// The workflows against the scripted fake backend (testing/fake_backend.h): failures only a fake
// produces on demand (a wrong shape or dtype, a NaN at a given element, an error at sample k, a
// load error, a run slower than --run-timeout), and what reaches the backends (--threads, the
// backend factory itself) in run, compare, verify, per-node and reduce.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "convgate/gate/reduce.h"
#include "convgate/gate/verify.h"
#include "convgate/gate/workflows.h"
#include "convgate/io/npz.h"
#include "graph/onnx_test_util.h"
#include "testing/fake_backend.h"

namespace convgate::gate {
namespace {

namespace fs = std::filesystem;
using testing::Fails;
using testing::FakeBackendFactory;
using testing::FakeModelScript;
using testing::FakeRun;
using testing::FloatInfo;
using testing::FloatTensor;
using testing::Returns;
using testing::ReturnsAfter;

class ScriptedBackendTest : public ::testing::Test {
 protected:
  // An empty file at `name`: the workflows check that a side's path exists before loading it; the
  // fake never reads it.
  fs::path File(const std::string& name) {
    const fs::path path = dir_ / name;
    std::fclose(std::fopen(path.c_str(), "w"));
    return path;
  }

  // x[1, 4] -> y[1, 4], answering each sample with `runs`.
  fs::path Model(const std::string& name, std::vector<FakeRun> runs) {
    const fs::path path = File(name);
    FakeModelScript script;
    script.signature.inputs = {FloatInfo("x", {1, 4})};
    script.signature.outputs = {FloatInfo("y", {1, 4})};
    script.runs = std::move(runs);
    backends_.Script(path, script);
    return path;
  }

  CompareOptions Compare(const fs::path& source, const fs::path& target, int samples) {
    CompareOptions options;
    options.source = source.string();
    options.target = target.string();
    options.data.generate.samples = samples;
    options.backend_factory = &backends_;
    return options;
  }

  testing::ScopedTempDir temp_;
  const fs::path dir_ = temp_.path();
  FakeBackendFactory backends_;
};

TensorMap Y(std::vector<float> values) {
  TensorMap map;
  map.InsertOrAssign("y", FloatTensor({1, static_cast<int64_t>(values.size())}, values));
  return map;
}

const std::vector<float> kY = {1, 2, 3, 4};

TEST_F(ScriptedBackendTest, RunFailsAnOutputOfTheWrongShapeOrDType) {
  RunOptions options;
  options.model = Model("short.onnx", {Returns(Y({1, 2, 3}))});
  options.backend_factory = &backends_;
  RunReport report = RunModelGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_EQ(report.verdict, Verdict::kFail);
  ASSERT_EQ(report.checks.size(), 1u);
  ASSERT_EQ(report.checks[0].failures.size(), 1u);
  EXPECT_EQ(report.checks[0].failures[0],
            "shape: output 'y' is [1, 3] but the model declares [1, 4]: dim 1 is 3, declared 4");

  TensorMap doubles;
  doubles.InsertOrAssign(
      "y", Tensor::FromVector<double>(DType::kFloat64, Shape::Of({1, 4}), {1, 2, 3, 4}));
  options.model = Model("double.onnx", {Returns(std::move(doubles))});
  report = RunModelGate(options);
  EXPECT_EQ(report.verdict, Verdict::kFail);
  ASSERT_EQ(report.checks.size(), 1u);
  ASSERT_EQ(report.checks[0].failures.size(), 1u);
  EXPECT_EQ(report.checks[0].failures[0],
            "dtype: output 'y' is float64 but the model declares float32");

  options.model = Model("right.onnx", {Returns(Y(kY))});
  EXPECT_EQ(RunModelGate(options).verdict, Verdict::kPass);
}

TEST_F(ScriptedBackendTest, RunNamesTheSampleAndElementOfAnIntroducedNaN) {
  RunOptions options;
  options.model = Model("nan.onnx", {Returns(Y(kY)), Returns(Y({1, 2, NAN, 4}))});
  options.data.generate.samples = 2;
  options.backend_factory = &backends_;
  RunReport report = RunModelGate(options);
  EXPECT_EQ(report.verdict, Verdict::kFail);
  ASSERT_EQ(report.checks.size(), 2u);
  EXPECT_TRUE(report.checks[0].passed);
  EXPECT_EQ(report.checks[1].sample, 1);
  EXPECT_EQ(report.checks[1].values.nan, 1);
  ASSERT_EQ(report.checks[1].failures.size(), 1u);
  EXPECT_NE(report.checks[1].failures[0].find("first at [0, 2] (the inputs are finite"),
            std::string::npos)
      << report.checks[1].failures[0];
}

TEST_F(ScriptedBackendTest, CompareLocatesATargetNaNAgainstAFiniteSource) {
  const fs::path source = Model("source.onnx", {Returns(Y(kY))});
  const fs::path target = Model("target.onnx", {Returns(Y({1, 2, 3, NAN}))});
  CompareReport report = CompareModelsGate(Compare(source, target, 1));
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_EQ(report.verdict, Verdict::kFail);
  ASSERT_EQ(report.checks.size(), 1u);
  const compare::TensorComparison& comparison = *report.checks[0].comparison;
  EXPECT_EQ(comparison.non_finite.introduced_nan, 1);
  EXPECT_EQ(comparison.non_finite.first_introduced, 3);
  EXPECT_EQ(comparison.worst.index, (std::vector<int64_t>{0, 3}));

  // The same NaN on both sides is shared: equal, and the comparison passes.
  const fs::path unstable = Model("unstable.onnx", {Returns(Y({1, 2, 3, NAN}))});
  EXPECT_EQ(CompareModelsGate(Compare(unstable, target, 1)).verdict, Verdict::kPass);
}

TEST_F(ScriptedBackendTest, CompareReportsAWrongShapeAsAFailureNotAnError) {
  const fs::path source = Model("source.onnx", {Returns(Y(kY))});
  const fs::path target = Model("target.onnx", {Returns(Y({1, 2, 3, 4, 5}))});
  CompareReport report = CompareModelsGate(Compare(source, target, 1));
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_EQ(report.verdict, Verdict::kFail);
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_FALSE(report.checks[0].comparison->shape_match);
  EXPECT_EQ(report.checks[0].comparison->target_desc, "float32[1, 5]");
}

TEST_F(ScriptedBackendTest, AnErrorAtSampleKStopsTheComparisonNamingSideAndSample) {
  const fs::path source = Model("source.onnx", {Returns(Y(kY))});
  const fs::path target =
      Model("target.onnx", {Returns(Y(kY)), Returns(Y(kY)),
                            Fails(Status::Unavailable("the runtime ran out of workspace"))});
  CompareReport report = CompareModelsGate(Compare(source, target, 4));
  ASSERT_TRUE(report.error.has_value());
  EXPECT_EQ(report.error->stage, Stage::kRun);
  EXPECT_EQ(report.error->status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(report.error->status.message(), "target sample 2: the runtime ran out of workspace");
  EXPECT_EQ(ExitCodeFor(report.verdict, report.error), ExitCode::kCannotRun);
  // Samples 0 and 1 were compared; sample 3 never ran on either side.
  EXPECT_EQ(report.checks.size(), 2u);
  int target_runs = 0;
  for (const testing::FakeRunCall& run : backends_.runs()) {
    EXPECT_LE(run.sample, 2);
    target_runs += run.path == target;
  }
  EXPECT_EQ(target_runs, 3);
}

TEST_F(ScriptedBackendTest, ALoadErrorIsALoadStageErrorNamingTheSide) {
  const fs::path source = Model("source.onnx", {Returns(Y(kY))});
  const fs::path target = File("corrupt.onnx");
  FakeModelScript corrupt;
  corrupt.load_error = Status::DataLoss(target.string() + ": not a valid ONNX model");
  backends_.Script(target, corrupt);
  CompareReport report = CompareModelsGate(Compare(source, target, 1));
  ASSERT_TRUE(report.error.has_value());
  EXPECT_EQ(report.error->stage, Stage::kLoad);
  EXPECT_EQ(report.error->status.message(),
            "target: " + target.string() + ": not a valid ONNX model");
  EXPECT_EQ(ToInt(ExitCodeFor(report.verdict, report.error)), 3);
  EXPECT_TRUE(backends_.runs().empty());  // nothing ran
}

TEST_F(ScriptedBackendTest, ARunSlowerThanTheRunTimeoutIsStopped) {
  RunOptions options;
  options.model = Model("slow.onnx", {Returns(Y(kY)), ReturnsAfter(30, Y(kY))});
  options.data.generate.samples = 2;
  options.data.limits.run_timeout_seconds = 0.05;
  options.backend_factory = &backends_;
  const auto start = std::chrono::steady_clock::now();
  RunReport report = RunModelGate(options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0);
  ASSERT_TRUE(report.error.has_value());
  EXPECT_EQ(report.error->stage, Stage::kRun);
  EXPECT_EQ(report.error->status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(report.error->status.message().rfind("sample 1: ", 0), 0u)
      << report.error->status.message();
  EXPECT_NE(report.error->status.message().find("timed out"), std::string::npos);
  EXPECT_EQ(ToInt(ExitCodeFor(report.verdict, report.error)), 3);
}

TEST_F(ScriptedBackendTest, RunTimeIsMeasuredOverEverySample) {
  RunOptions options;
  options.model = Model("slow.onnx", {ReturnsAfter(0.1, Y(kY))});
  options.data.generate.samples = 2;
  options.backend_factory = &backends_;
  RunReport report = RunModelGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_GE(report.model.run_seconds, 0.2);
}

TEST_F(ScriptedBackendTest, ThreadsAndLimitsReachEveryLoad) {
  const fs::path source = Model("source.onnx", {Returns(Y(kY))});
  const fs::path target = Model("target.onnx", {Returns(Y(kY))});
  CompareOptions options = Compare(source, target, 1);
  options.data.threads = 3;
  options.data.limits.run_timeout_seconds = 42;
  ASSERT_EQ(CompareModelsGate(options).verdict, Verdict::kPass);
  const std::vector<testing::FakeLoad> loads = backends_.loads();
  ASSERT_EQ(loads.size(), 2u);
  for (const testing::FakeLoad& load : loads) {
    EXPECT_EQ(load.backend, "ort");
    EXPECT_EQ(load.options.intra_op_threads, 3);
    EXPECT_EQ(load.options.limits.run_timeout_seconds, 42);
  }
}

TEST_F(ScriptedBackendTest, VerifyLoadsEveryModelThroughTheFactory) {
  const fs::path source = Model("source.onnx", {Returns(Y(kY))});
  const fs::path target = Model("target.onnx", {Returns(Y({1, 2, 3, 4.5f}))});
  VerifyOptions options;
  options.source = source.string();
  options.target = target.string();
  options.compare.data.threads = 2;
  options.compare.backend_factory = &backends_;
  VerifyReport report = VerifyGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_TRUE(report.e2e_passed());
  EXPECT_EQ(report.comparison->verdict, Verdict::kFail);
  EXPECT_EQ(report.verdict, Verdict::kFail);
  // The source's precheck, the target's own run, then the comparison's source: the comparison
  // runs the target its own run loaded, with the same load options.
  std::vector<fs::path> paths;
  for (const testing::FakeLoad& load : backends_.loads()) {
    paths.push_back(load.path);
    EXPECT_EQ(load.options.intra_op_threads, 2);
  }
  EXPECT_EQ(paths, (std::vector<fs::path>{source, target, source}));
}

// x -> Relu -> h -> Neg -> y: per-node validation reads the graph from the file; the fake answers
// the runs.
constexpr char kChain[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] x) => (float[1, 4] y)
{
  h = Relu(x)
  y = Neg(h)
}
)";

class ScriptedPerNodeTest : public ScriptedBackendTest {
 protected:
  // The chain as a model file, scripted to answer h and y (and x, which reduce fetches as the
  // node's input).
  fs::path Chain(const std::string& name, const TensorMap& tensors) {
    const fs::path path = dir_ / name;
    testing::WriteModel(testing::ParseOnnxText(kChain), path);
    FakeModelScript script;
    script.signature.inputs = {FloatInfo("x", {1, 4})};
    script.signature.outputs = {FloatInfo("y", {1, 4})};
    script.runs = {Returns(tensors.Clone())};
    backends_.Script(path, script);
    return path;
  }

  static TensorMap Values(std::vector<float> h, std::vector<float> y) {
    TensorMap map;
    map.InsertOrAssign("x", FloatTensor({1, 4}, {-1, 2, -3, 4}));
    map.InsertOrAssign("h", FloatTensor({1, 4}, h));
    map.InsertOrAssign("y", FloatTensor({1, 4}, y));
    return map;
  }

  // The inputs the fake's x stands for, to load rather than generate.
  fs::path Inputs() {
    TensorMap inputs;
    inputs.InsertOrAssign("x", FloatTensor({1, 4}, {-1, 2, -3, 4}));
    EXPECT_TRUE(io::WriteNpz(dir_ / "inputs.npz", inputs).ok());
    return dir_ / "inputs.npz";
  }
};

TEST_F(ScriptedPerNodeTest, PerNodeNamesTheNodeWhereATargetNaNAppears) {
  const fs::path source = Chain("source.onnx", Values({0, 2, 0, 4}, {0, -2, 0, -4}));
  const fs::path target = Chain("target.onnx", Values({0, 2, NAN, 4}, {0, -2, NAN, -4}));
  CompareOptions options = Compare(source, target, 1);
  options.per_node.enabled = true;
  options.per_node.local_error = LocalErrorMode::kNone;
  CompareReport report = CompareModelsGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  ASSERT_TRUE(report.per_node.has_value());
  const PerNodeReport& per_node = *report.per_node;
  ASSERT_EQ(per_node.nodes.size(), 2u);
  EXPECT_EQ(per_node.nodes[0].tensor, "h");
  EXPECT_EQ(per_node.nodes[0].op_type, "Relu");
  EXPECT_EQ(per_node.nodes[0].status, NodeStatus::kFailed);
  EXPECT_EQ(per_node.first_divergent, 0);
  EXPECT_EQ(per_node.non_finite.introduced, 0);  // index of the node that introduced it
  EXPECT_EQ(per_node.nodes[0].samples[0].introduced_nan, 1);

  // A backend that cannot expose intermediates is refused before anything runs.
  backends_.set_supports_intermediates(false);
  CompareReport refused = CompareModelsGate(options);
  ASSERT_TRUE(refused.error.has_value());
  EXPECT_EQ(refused.error->stage, Stage::kFlags);
  EXPECT_NE(refused.error->status.message().find("cannot expose intermediate tensors"),
            std::string::npos);
}

// reduce loads its sides again after the comparison, and runs the reproducer: every load, the
// reproducer's included, gets --threads.
TEST_F(ScriptedPerNodeTest, ReduceHonoursThreadsInEveryLoad) {
  const fs::path source = Chain("source.onnx", Values({0, 2, 0, 4}, {0, -2, 0, -4}));
  const fs::path target = Chain("target.onnx", Values({0, 2.5f, 0, 4}, {0, -2.5f, 0, -4}));
  ReduceOptions options;
  options.compare = Compare(source, target, 1);
  options.compare.data.load_inputs = Inputs();
  options.compare.data.threads = 3;
  options.out_dir = dir_ / "bug";
  // The one-node model reduce writes: scripted with the target's wrong h.
  FakeModelScript node;
  node.signature.inputs = {FloatInfo("x", {1, 4})};
  node.signature.outputs = {FloatInfo("h", {1, 4})};
  TensorMap wrong_h;
  wrong_h.InsertOrAssign("h", FloatTensor({1, 4}, {0, 2.5f, 0, 4}));
  node.runs = {Returns(std::move(wrong_h))};
  backends_.Script(options.out_dir / "node.onnx", node);

  ReduceReport report = ReduceGate(options);
  ASSERT_FALSE(report.error.has_value()) << report.error->status.ToString();
  EXPECT_EQ(report.comparison.per_node->nodes[report.node].tensor, "h");
  EXPECT_TRUE(report.reproduces);
  EXPECT_EQ(report.verdict, Verdict::kPass);
  std::vector<fs::path> paths;
  for (const testing::FakeLoad& load : backends_.loads()) {
    paths.push_back(load.path.filename());
    EXPECT_EQ(load.options.intra_op_threads, 3) << load.path;
  }
  // The comparison's two sides, the node alone (local error: not scripted at its temporary
  // path), reduce's own two sides, the reproducer's node.onnx.
  ASSERT_GE(paths.size(), 5u);
  EXPECT_EQ(paths.back(), "node.onnx");
  EXPECT_EQ(std::count(paths.begin(), paths.end(), "source.onnx"), 2);
  EXPECT_EQ(std::count(paths.begin(), paths.end(), "target.onnx"), 2);
}

}  // namespace
}  // namespace convgate::gate
