// The opencv and exec backends through the real `convgate` binary: OpenCV DNN against ONNX
// Runtime, an external numpy runtime (examples/exec/numpy_runner.py) and a misbehaving one
// (tests/fixtures/fake_runner.py), each failure with its exit code and its evidence in report.json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;

const fs::path kModels = fs::path(CONVGATE_BINARY_DIR) / "examples";
const fs::path kSource = fs::path(CONVGATE_SOURCE_DIR);
const std::string kPython = "/usr/bin/python3";

class BackendsCliTest : public testing::CliTest {
 protected:
  static std::string Model(const std::string& name) { return (kModels / name).string(); }
  std::string Out() const { return (dir_ / "out").string(); }
  json Report() const {
    std::ifstream in(dir_ / "out" / "report.json");
    EXPECT_TRUE(in.good()) << "no report.json";
    return in.good() ? json::parse(in) : json();
  }
};

using testing::Describe;

// Quoted for --target-exec's splitting: paths with spaces would still be one word.
std::string NumpyRunner() {
  return kPython + " '" + (kSource / "examples/exec/numpy_runner.py").string() +
         "' {model} {inputs} {outputs}";
}

// One process serving every sample (exec_serve.py).
std::string ServingNumpyRunner() {
  return kPython + " '" + (kSource / "examples/exec/numpy_runner.py").string() +
         "' {model} --serve {inputs_dir} {outputs_dir}";
}

std::string FakeServeRunner(const std::string& mode) {
  return kPython + " '" + (kSource / "tests/fixtures/fake_serve_runner.py").string() + "' '" +
         mode + "' {model} {inputs_dir} {outputs_dir}";
}

std::string FakeRunner(const std::string& mode) {
  return kPython + " '" + (kSource / "tests/fixtures/fake_runner.py").string() + "' " + mode +
         " {model} {inputs} {outputs}";
}

class OpenCvCliTest : public BackendsCliTest {
 protected:
  void SetUp() override {
#if !CONVGATE_WITH_OPENCV
    GTEST_SKIP() << "built without OpenCV DNN (CONVGATE_WITH_OPENCV=OFF)";
#endif
    BackendsCliTest::SetUp();
  }
};

// ORT's graph optimization level changes the bits a model computes, so the report says which
// one ran; extended unless --ort-optimization says otherwise.
TEST_F(BackendsCliTest, OrtOptimizationLevelIsChosenByFlagAndRecorded) {
  ProcessResult r =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"), "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(Report()["source"]["backend_settings"],
            "CPUExecutionProvider, graph optimization extended, intra-op threads auto, inter-op "
            "sequential");
  EXPECT_NE(r.out.find("graph optimization extended"), std::string::npos) << Describe(r);
  for (const std::string level : {"disabled", "basic", "all"}) {
    fs::remove_all(Out());
    r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"), "--ort-optimization",
                  level, "--out", Out()});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_NE(Report()["target"]["backend_settings"].get<std::string>().find("graph optimization " +
                                                                             level + ","),
              std::string::npos);
  }
  r = Convgate(
      {"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"), "--ort-optimization", "max"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("--ort-optimization: 'max' is not a level: disabled, basic, extended, all"),
            std::string::npos)
      << Describe(r);
}

TEST_F(OpenCvCliTest, OnnxRuntimeAgainstOpenCvPasses) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"),
                              "--target-backend", "opencv", "--samples", "3", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  json report = Report();
  EXPECT_EQ(report["source"]["backend"], "ort");
  EXPECT_EQ(report["target"]["backend"], "opencv");
  EXPECT_EQ(report["target"]["backend_version"].get<std::string>().substr(0, 2), "4.");
  EXPECT_FALSE(report["target"].contains("backend_settings")) << report["target"].dump();
  EXPECT_EQ(report["summary"]["checks"], 6) << report["summary"].dump();
}

TEST_F(OpenCvCliTest, OpenCvCatchesThePerturbedConversion) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx"),
                              "--target-backend", "opencv"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("logits"), std::string::npos) << Describe(r);
}

TEST_F(OpenCvCliTest, ModelOpenCvCannotLoadExitsThreeWithOpenCvsReason) {
  ProcessResult r = Convgate({"run", Model("tokens.onnx"), "--backend", "opencv", "--out", Out()});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("OpenCV DNN 4.6.0 cannot load this model"), std::string::npos)
      << Describe(r);
  EXPECT_NE(r.err.find(Model("tokens.onnx")), std::string::npos) << Describe(r);
  json report = Report();
  EXPECT_EQ(report["error"]["stage"], "load");
  EXPECT_NE(report["error"]["message"].get<std::string>().find("Gather"), std::string::npos);
}

class ExecCliTest : public BackendsCliTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kPython)) GTEST_SKIP() << "needs Debian's " << kPython << " with numpy";
    BackendsCliTest::SetUp();
  }
};

TEST_F(ExecCliTest, NumpyRuntimeAgainstOnnxRuntimePasses) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_weights.npz"),
                              "--target-exec", NumpyRunner(), "--samples", "2", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  json report = Report();
  EXPECT_EQ(report["target"]["backend"], "exec");
  EXPECT_EQ(report["target"]["kind"], "model");
  EXPECT_NE(report["target"]["backend_command"].get<std::string>().find("numpy_runner.py"),
            std::string::npos);
  EXPECT_EQ(report["target"]["output_matching"], "name");
  EXPECT_EQ(report["summary"]["checks"], 4) << report["summary"].dump();
}

// verify's own end-to-end run of the target goes through --target-exec as its comparison does
// (it used to load the exec backend without the command: "the exec backend needs a command").
TEST_F(ExecCliTest, VerifyRunsTheTargetThroughTargetExecForItsEndToEndRunToo) {
  ProcessResult r =
      Convgate({"verify", Model("tinycnn.onnx"), "--target", Model("tinycnn_weights.npz"),
                "--target-exec", NumpyRunner(), "--samples", "2", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::ifstream in(dir_ / "out" / "verify_result.json");
  const json result = json::parse(in);
  EXPECT_EQ(result["e2e_passed"], true) << result.dump(2);
  EXPECT_NE(result["e2e_detail"].get<std::string>().find("exec"), std::string::npos)
      << result.dump(2);
  // A runner that fails makes the end-to-end run fail too: the command is really the one used.
  fs::remove_all(Out());
  r = Convgate({"verify", Model("tinycnn.onnx"), "--target", Model("tinycnn_weights.npz"),
                "--target-exec", FakeRunner("fail"), "--out", Out()});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_EQ(r.err.find("needs a command"), std::string::npos) << Describe(r);
}

TEST_F(ExecCliTest, NumpyRuntimeCatchesThePerturbedSource) {
  ProcessResult r = Convgate({"compare", Model("tinycnn_perturbed.onnx"),
                              Model("tinycnn_weights.npz"), "--target-exec", NumpyRunner()});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
}

TEST_F(ExecCliTest, RunOnAModelWithUnknownInputsNeedsLoadedInputs) {
  ProcessResult r = Convgate({"run", Model("tinycnn_weights.npz"), "--exec", NumpyRunner()});
  ASSERT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("--load-inputs"), std::string::npos) << Describe(r);
  const std::string inputs = (dir_ / "inputs.npz").string();
  ProcessResult saved =
      Convgate({"run", Model("tinycnn.onnx"), "--samples", "2", "--save-inputs", inputs});
  ASSERT_EQ(saved.exit_code, 0) << Describe(saved);
  ProcessResult ran = Convgate({"run", Model("tinycnn_weights.npz"), "--exec", NumpyRunner(),
                                "--load-inputs", inputs, "--out", Out()});
  ASSERT_EQ(ran.exit_code, 0) << Describe(ran);
  json report = Report();
  EXPECT_EQ(report["model"]["outputs"], json({"logits", "probs"}));
  EXPECT_EQ(report["summary"]["checks"], 4) << report["summary"].dump();
}

// Issue 9: a runner that writes an empty outputs.npz "passed" run with 0 of 0 checks.
TEST_F(ExecCliTest, ARunThatReturnsNoOutputsChecksNothingAndFails) {
  const std::string inputs = (dir_ / "inputs.npz").string();
  ASSERT_EQ(Convgate({"run", Model("tinycnn.onnx"), "--save-inputs", inputs}).exit_code, 0);
  ProcessResult r = Convgate({"run", Model("tinycnn_weights.npz"), "--exec", FakeRunner("empty"),
                              "--load-inputs", inputs, "--out", Out()});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("nothing was checked: the model declares no outputs and returned none"),
            std::string::npos)
      << r.out;
  std::ifstream verify_file(dir_ / "out" / "verify_result.json");
  const json verify = json::parse(verify_file);
  EXPECT_EQ(verify["verify_passed"], false);
  EXPECT_NE(verify["error"].get<std::string>().find("nothing was checked"), std::string::npos);
}

TEST_F(ExecCliTest, FailingCommandExitsThreeWithItsStderrInTheReport) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"),
                              "--target-exec", FakeRunner("fail"), "--out", Out()});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("exited with code 3"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("RuntimeError: simulated runtime failure"), std::string::npos);
  json report = Report();
  EXPECT_EQ(report["error"]["stage"], "run");
  EXPECT_EQ(report["error"]["code"], "Unavailable");
  const std::string log = report["target"]["backend_log"].get<std::string>();
  EXPECT_NE(log.find("fake_runner: loading the model"), std::string::npos) << log;
  EXPECT_NE(log.find("RuntimeError: simulated runtime failure"), std::string::npos) << log;
}

TEST_F(ExecCliTest, TimeoutIsHonouredQuickly) {
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"), "--target-exec",
                FakeRunner("sleep"), "--exec-timeout", "1", "--out", Out()});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("timed out after 1"), std::string::npos) << Describe(r);
  EXPECT_LT(seconds, 8.0);
  EXPECT_EQ(Report()["error"]["stage"], "run");
}

TEST_F(ExecCliTest, CommandsThatWriteNothingGarbageOrWrongNamesExitThree) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nothing", "exited 0 but wrote no outputs.npz"},
      {"garbage", "cannot read the outputs.npz it wrote"},
      {"wrong-names", "no output 'logits' (it holds: foo, bar)"},
  };
  for (const auto& [mode, expected] : cases) {
    ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"),
                                "--target-exec", FakeRunner(mode), "--out", Out()});
    EXPECT_EQ(r.exit_code, 3) << mode << "\n" << Describe(r);
    EXPECT_NE(r.err.find(expected), std::string::npos) << mode << "\n" << Describe(r);
    json report = Report();
    EXPECT_EQ(report["error"]["code"], "DataLoss") << mode;
    EXPECT_FALSE(report["verify_passed"].is_boolean() && report["verify_passed"].get<bool>());
  }
}

TEST_F(ExecCliTest, MissingProgramExitsThreeNamingIt) {
  ProcessResult r =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"), "--target-exec",
                "convgate-no-such-runner {model} {inputs} {outputs}"});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("convgate-no-such-runner"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("no such program in PATH"), std::string::npos) << Describe(r);
}

TEST_F(ExecCliTest, BadExecFlagsAreUsageErrors) {
  const std::vector<std::vector<std::string>> bad = {
      {"--target-exec", "python3 'unterminated {outputs}"},
      {"--target-exec", "python3 run.py {model} {inputs}"},
      {"--target-exec", NumpyRunner(), "--target-backend", "ort"},
      {"--target-backend", "exec"},
      {"--target-exec", NumpyRunner(), "--exec-timeout", "-1"},
      {"--target-exec", "python3 run.py {model} --serve {inputs_dir}"},
  };
  for (const std::vector<std::string>& flags : bad) {
    std::vector<std::string> args = {"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx")};
    args.insert(args.end(), flags.begin(), flags.end());
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << " " << flags[1] << "\n" << Describe(r);
  }
}

// The serving mode: one process for every sample, as the shipped runners default to.
TEST_F(ExecCliTest, OneProcessServesEverySample) {
  const std::string started = (dir_ / "started.txt").string();
  ProcessResult r =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_weights.npz"), "--target-exec",
                FakeServeRunner("count=" + started), "--samples", "5", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::ifstream in(started);
  int starts = 0;
  for (std::string line; std::getline(in, line);) ++starts;
  EXPECT_EQ(starts, 1) << "the runner started " << starts << " times for 5 samples";
  json report = Report();
  EXPECT_EQ(report["summary"]["checks"], 10) << report["summary"].dump();
  EXPECT_EQ(report["target"]["backend_settings"], "one process serving every sample");

  // The shipped runner serves the same way and agrees with ONNX Runtime.
  fs::remove_all(Out());
  r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_weights.npz"), "--target-exec",
                ServingNumpyRunner(), "--samples", "3", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // And catches a perturbed source.
  r = Convgate({"compare", Model("tinycnn_perturbed.onnx"), Model("tinycnn_weights.npz"),
                "--target-exec", ServingNumpyRunner()});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
}

TEST_F(ExecCliTest, AServingRunnerMayPrintLinesThatAreNotAnswers) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_weights.npz"),
                              "--target-exec", FakeServeRunner("chatty"), "--samples", "3"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

TEST_F(ExecCliTest, AServingRunnerThatFailsASampleEndsAndTimesOutSaysSo) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_weights.npz"),
                              "--target-exec", FakeServeRunner("error"), "--out", Out()});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("failed on sample_0: simulated failure on sample_0"), std::string::npos)
      << Describe(r);
  EXPECT_EQ(Report()["error"]["stage"], "run");

  r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_weights.npz"), "--target-exec",
                FakeServeRunner("die")});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("exited with code 3"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("fake_serve_runner: simulated crash"), std::string::npos) << Describe(r);

  const auto start = std::chrono::steady_clock::now();
  r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_weights.npz"), "--target-exec",
                FakeServeRunner("silent"), "--exec-timeout", "1"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("no answer for sample_0 within 1 s"), std::string::npos) << Describe(r);
  EXPECT_LT(seconds, 15.0);
}

}  // namespace
}  // namespace convgate
