// The openvino backend through the real `convgate` binary: ONNX Runtime against OpenVINO on the
// example models (a clean pair passes, a perturbed one fails), OpenVINO IR by its extension,
// --per-node through OpenVINO's intermediate outputs (an .onnx and an IR target), and the exit-3
// paths (a model OpenVINO
// cannot read, no venv). Skipped, saying why, when the venv has no openvino.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

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
using testing::Describe;
using testing::ProcessResult;

const fs::path kModels = fs::path(CONVGATE_BINARY_DIR) / "examples";

// The venv scripts/setup.sh makes (CONVGATE_VENV overrides), as core/python_env.h finds it.
fs::path Venv() {
  if (const char* venv = std::getenv("CONVGATE_VENV"); venv != nullptr && venv[0] != '\0') {
    return venv;
  }
  if (const char* deps = std::getenv("CONVGATE_DEPS"); deps != nullptr && deps[0] != '\0') {
    return fs::path(deps) / "venv";
  }
  return fs::path(std::getenv("HOME")) / ".cache/convgate-deps/venv";
}

class OpenVinoCliTest : public testing::CliTest {
 protected:
  static void SetUpTestSuite() {
    const fs::path python = Venv() / "bin" / "python";
    if (!fs::exists(python)) {
      missing_ = "no venv at " + Venv().string() + " (run ./scripts/setup.sh)";
      return;
    }
    ProcessResult probe = testing::RunProcess({python.string(), "-c", "import openvino"});
    if (probe.exit_code != 0) missing_ = python.string() + " cannot import openvino";
  }
  void SetUp() override {
#if !CONVGATE_WITH_OPENVINO
    GTEST_SKIP() << "built without the OpenVINO backend (CONVGATE_WITH_OPENVINO=OFF)";
#endif
    if (!missing_.empty()) GTEST_SKIP() << missing_;
    CliTest::SetUp();
  }
  static std::string Model(const std::string& name) { return (kModels / name).string(); }
  std::string Out() const { return Path("out"); }
  json Report() const {
    std::ifstream in(dir_ / "out" / "report.json");
    EXPECT_TRUE(in.good()) << "no report.json";
    return in.good() ? json::parse(in) : json();
  }

  static std::string missing_;
};

std::string OpenVinoCliTest::missing_;

TEST_F(OpenVinoCliTest, OnnxRuntimeAgainstOpenVinoPassesAndIsRecorded) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"),
                              "--target-backend", "openvino", "--samples", "3", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = Report();
  EXPECT_EQ(report["target"]["backend"], "openvino") << report["target"].dump(1);
  EXPECT_EQ(report["target"]["backend_settings"], "CPU, inference precision f32");
  EXPECT_EQ(report["target"]["backend_version"].get<std::string>().substr(0, 7), "2026.4.");
  EXPECT_EQ(report["source"]["backend"], "ort");
}

// `convgate bench` with an OpenVINO side: both runtimes timed on the same samples; --streams 2
// compiles OpenVINO for two CPU streams (benchmark_app's throughput mode) and keeps two requests
// in flight on it, as on ONNX Runtime.
TEST_F(OpenVinoCliTest, BenchTimesOnnxRuntimeAgainstOpenVino) {
  ProcessResult r = Convgate({"bench", Model("speed_base.onnx"), Model("speed_base.onnx"),
                              "--target-backend", "openvino", "--warmup", "2", "--iterations", "20",
                              "--streams", "2", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = Report();
  const json& sides = report["benchmark"]["sides"];
  ASSERT_EQ(sides.size(), 2u) << report.dump().substr(0, 400);
  EXPECT_EQ(sides[0]["backend"], "ort");
  EXPECT_EQ(sides[0]["streams"], 2);
  EXPECT_EQ(sides[1]["backend"], "openvino");
  EXPECT_EQ(sides[1]["settings"], "CPU, inference precision f32, 2 streams");
  EXPECT_EQ(sides[1]["latency"]["count"], 20);
  EXPECT_EQ(sides[1]["streams"], 2);
  EXPECT_EQ(sides[1].value("streams_note", ""), "") << sides[1].dump(1);
  EXPECT_GT(report["benchmark"]["speed"]["speedup"].get<double>(), 0);
}

TEST_F(OpenVinoCliTest, APerturbedModelFailsThroughOpenVino) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx"),
                              "--target-backend", "openvino"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
}

TEST_F(OpenVinoCliTest, AModelOpenVinoCannotReadExitsThreeWithItsMessage) {
  std::ofstream(Path("broken.onnx")) << "not an onnx model at all";
  ProcessResult r = Convgate(
      {"compare", Model("tinycnn.onnx"), Path("broken.onnx"), "--target-backend", "openvino"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find(Path("broken.onnx")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("OpenVINO cannot read the model"), std::string::npos) << r.err;
}

// The runner process (CONVGATE_OPENVINO_RUNNER) needs the venv's Python and says what to run
// without it; in-process OpenVINO needs no Python at all.
TEST_F(OpenVinoCliTest, NoVenvExitsThreeSayingWhatToRun) {
  const std::string runner = std::string(CONVGATE_SOURCE_DIR) + "/runtime/openvino_runner.py";
  const std::string command = "CONVGATE_OPENVINO_RUNNER=" + runner +
                              " CONVGATE_VENV=" + Path("none") + " " + Binary().string() + " run " +
                              Model("tinycnn.onnx") + " --backend openvino 2>&1";
  ProcessResult r = testing::RunProcess({"/bin/sh", "-c", command});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.out.find("run ./scripts/setup.sh"), std::string::npos) << r.out;
#if CONVGATE_OPENVINO_IN_PROCESS
  ProcessResult in_process =
      testing::RunProcess({"/bin/sh", "-c",
                           "CONVGATE_VENV=" + Path("none") + " " + Binary().string() + " run " +
                               Model("tinycnn.onnx") + " --backend openvino 2>&1"});
  EXPECT_EQ(in_process.exit_code, 0) << Describe(in_process);
#endif
}

// IR is OpenVINO's own format: converted here from tinycnn.onnx by the venv's OpenVINO, then run
// by extension (no --backend) and compared with the ONNX model on ONNX Runtime.
TEST_F(OpenVinoCliTest, IrRunsByItsExtension) {
  ProcessResult convert = testing::RunProcess(
      {(Venv() / "bin" / "python").string(), "-c",
       "import openvino as ov, sys\n"
       "ov.save_model(ov.Core().read_model(sys.argv[1]), sys.argv[2], compress_to_fp16=False)",
       Model("tinycnn.onnx"), Path("tinycnn.xml")});
  ASSERT_EQ(convert.exit_code, 0) << Describe(convert);
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Path("tinycnn.xml"), "--shape",
                              "image:2x3x16x16", "--out", Out()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(Report()["target"]["backend"], "openvino");
}

TEST_F(OpenVinoCliTest, PerNodeThroughOpenVinoMatchesEveryNode) {
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"),
                              "--target-backend", "openvino", "--per-node", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  const json& summary = report["per_node"]["summary"];
  EXPECT_EQ(summary["failed"], 0) << report["per_node"].dump(1);
  EXPECT_GT(summary["matched"].get<int>(), 4) << report["per_node"].dump(1);
  EXPECT_EQ(summary["passed"], summary["matched"]);
}

// An IR target: its layers' output tensors keep the ONNX names, so per-node matches them to the
// ONNX source's tensors (IR layers read from the .xml, values through Model.add_outputs). The
// faithful IR passes node by node; the IR of the perturbed model (classifier weights scaled by
// 1.01) first diverges at the classifier.
//
// The IRs come from ovc's Python convert_model, whose offline (MOC) transformations fold the
// BatchNorm; convgate's own `--to openvino` of an ONNX file (read_model + save_model in C++) keeps
// the frontend's graph, so there every layer matches by name (checked last).
TEST_F(OpenVinoCliTest, PerNodeMatchesAnIrTargetsTensorsToTheOnnxSource) {
  for (const std::string model : {"tinycnn", "tinycnn_perturbed"}) {
    ProcessResult converted = testing::RunProcess(
        {(Venv() / "bin" / "python").string(), "-c",
         "import openvino as ov, sys\n"
         "ov.save_model(ov.convert_model(sys.argv[1]), sys.argv[2], compress_to_fp16=False)",
         Model(model + ".onnx"), Path(model + ".xml")});
    ASSERT_EQ(converted.exit_code, 0) << Describe(converted);
  }
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Path("tinycnn.xml"), "--shape",
                              "image:2x3x16x16", "--per-node", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  json report = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  const json& summary = report["per_node"]["summary"];
  EXPECT_GT(summary["matched"].get<int>(), 4) << report["per_node"].dump(1);
  EXPECT_EQ(summary["passed"], summary["matched"]) << report["per_node"].dump(1);
  EXPECT_NE(report["per_node"].dump().find("the target is an OpenVINO IR"), std::string::npos);

  r = Convgate({"compare", Model("tinycnn.onnx"), Path("tinycnn_perturbed.xml"), "--shape",
                "image:2x3x16x16", "--per-node", "--json"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  report = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  EXPECT_GT(report["per_node"]["summary"]["failed"].get<int>(), 0) << report["per_node"].dump(1);
  const json& first = report["per_node"]["first_divergent"];
  // OpenVINO made the Gemm a MatMul and an Add; the Add carries the ONNX output's name.
  EXPECT_EQ(first["tensor"], "logits") << first.dump(1);
  EXPECT_EQ(first["op_type"], "Add") << first.dump(1);
  // OpenVINO 2026 folds the BatchNorm into the convolution and drops the convolution's tensor
  // name: 'conv' is not unmatched but fused into the layer that carries 'bn'.
  const json& fused = report["per_node"]["not_comparable"];
  ASSERT_TRUE(fused.is_array()) << report["per_node"].dump(1);
  EXPECT_NE(fused.dump().find("{\"reason\":\"fused into 'BatchNormalization_bn'"),
            std::string::npos)
      << fused.dump(1);
  EXPECT_EQ(report["per_node"]["culprit_not_determined"], "no local test against an OpenVINO IR");

  ProcessResult converted = Convgate({"convert", Model("tinycnn_perturbed.onnx"), "--to",
                                      "openvino", "-o", Path("own.xml"), "--no-cache"});
  ASSERT_EQ(converted.exit_code, 0) << Describe(converted);
  r = Convgate({"compare", Model("tinycnn.onnx"), Path("own.xml"), "--shape", "image:2x3x16x16",
                "--per-node", "--json"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  report = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  EXPECT_EQ(report["per_node"]["summary"]["unmatched"], 0) << report["per_node"].dump(1);
  EXPECT_EQ(report["per_node"]["first_divergent"]["tensor"], "logits") << report.dump(1);
}

// An IR as OpenVINO up to 2022 wrote it (scripts/make_fused_ir.py): the Convolution that absorbed
// tinycnn's BatchNorm keeps the tensor name 'conv' but computes the scaled convolution, and each
// layer's rt_info fused_names lists the ONNX nodes it carries. Compared by name, 'conv' fails a
// faithful conversion (cosine ~0.9); read from the lists, it is "not comparable: fused into" the
// Convolution, and 'bn' (the last fused node's value) is compared and matches. A perturbed
// convolution then first diverges at the layer that carries it, named with its fused nodes, and
// no culprit line pretends a local test ran.
TEST_F(OpenVinoCliTest, PerNodeAgainstAFusedIrComparesLikeWithLike) {
  const std::string script = (fs::path(CONVGATE_SOURCE_DIR) / "scripts/make_fused_ir.py").string();
  const std::string python = (Venv() / "bin" / "python").string();
  ProcessResult made =
      testing::RunProcess({python, script, Model("tinycnn.onnx"), Path("fused.xml")});
  ASSERT_EQ(made.exit_code, 0) << Describe(made);
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Path("fused.xml"), "--shape",
                              "image:2x3x16x16", "--per-node", "--strict", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  json report = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  json per_node = report["per_node"];
  EXPECT_EQ(per_node["summary"]["failed"], 0) << per_node.dump(1);
  EXPECT_TRUE(per_node["first_divergent"].is_null()) << per_node["first_divergent"].dump(1);
  ASSERT_TRUE(per_node["not_comparable"].is_array()) << per_node.dump(1);
  EXPECT_EQ(per_node["not_comparable"][0]["tensor"], "conv");
  EXPECT_NE(per_node["not_comparable"][0]["reason"].get<std::string>().find("fused into '"),
            std::string::npos);
  bool bn_compared = false;
  for (const json& node : per_node["nodes"]) {
    EXPECT_NE(node["tensor"], "conv") << node.dump(1);
    if (node["tensor"] != "bn") continue;
    bn_compared = true;
    EXPECT_EQ(node["fused"], json({"Conv_conv", "BatchNormalization_bn"})) << node.dump(1);
    EXPECT_EQ(node["status"], "passed");
  }
  EXPECT_TRUE(bn_compared) << per_node.dump(1);

  ProcessResult injected =
      testing::RunProcess({Tool("convgate-inject-fault").string(), Model("tinycnn.onnx"),
                           Path("perturbed.onnx"), "--fault", "perturb-conv", "--factor", "1.05"});
  ASSERT_EQ(injected.exit_code, 0) << Describe(injected);
  made = testing::RunProcess({python, script, Path("perturbed.onnx"), Path("perturbed.xml")});
  ASSERT_EQ(made.exit_code, 0) << Describe(made);
  r = Convgate({"compare", Model("tinycnn.onnx"), Path("perturbed.xml"), "--shape",
                "image:2x3x16x16", "--per-node"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("first divergent: node 'BatchNormalization_bn' (Add, fused Conv_conv + "
                       "BatchNormalization_bn) -> 'bn'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("culprit: not determined (no local test against an OpenVINO IR)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("culprit: none"), std::string::npos) << r.out;
}

// SIGTERM while the runner runs: the runner's group was registered in the openvino module's own
// copy of the interrupt state, so convgate waited out its 5 s grace and left the runner's
// temporary folder behind (issue 32, item 9). One state per process now: the runner is stopped
// at once, the folder removed, exit 143.
TEST_F(OpenVinoCliTest, SigtermStopsTheRunnerAtOnceAndRemovesItsFolder) {
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  ::setenv("TMPDIR", tmp.c_str(), 1);
  // The runner process: what it leaves behind is what this test is about.
  const std::string runner = std::string(CONVGATE_SOURCE_DIR) + "/runtime/openvino_runner.py";
  ::setenv("CONVGATE_OPENVINO_RUNNER", runner.c_str(), 1);
  // 20000 samples: generated in well under a second, run for tens of seconds.
  testing::StartedProcess convgate =
      testing::StartProcess({Binary().string(), "run", Model("tinycnn.onnx"), "--backend",
                             "openvino", "--samples", "20000"});
  ::unsetenv("TMPDIR");
  ::unsetenv("CONVGATE_OPENVINO_RUNNER");
  ASSERT_GT(convgate.pid, 0);
  // Samples are running once the runner's folder holds a sample's inputs.
  auto running = [&] {
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(tmp, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (it->path().filename() == "inputs.npz") return true;
    }
    return false;
  };
  ASSERT_TRUE(testing::WaitFor(running, 60.0)) << "the openvino runner never ran a sample";
  ::kill(convgate.pid, SIGTERM);
  ProcessResult r = testing::WaitProcess(convgate);
  EXPECT_EQ(r.exit_code, 143) << Describe(r);
  EXPECT_EQ(r.err.find("not stopped within"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("removed its temporary folders"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(tmp)) << "left in " << tmp << ": "
                                 << fs::directory_iterator(tmp)->path().filename();
}

}  // namespace
}  // namespace convgate
