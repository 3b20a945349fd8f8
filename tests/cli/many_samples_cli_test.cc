// Many samples in flat memory, end to end with the real binary: generated samples made one at a
// time, the source's outputs run ahead onto disk when they outgrow the memory kept for them, and
// --data folders decoded as the samples run. Every path must judge exactly what holding every
// sample judges.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"
#include "testing/subprocess.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const fs::path kExamples = fs::path(CONVGATE_BINARY_DIR) / "examples";

std::string Model(const std::string& name) { return (kExamples / name).string(); }

class ManySamplesCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    testing::CliTest::SetUp();
    // The run's scratch folders land here, so the test sees that none is left behind.
    fs::create_directories(dir_ / "tmp");
    ::setenv("TMPDIR", (dir_ / "tmp").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TMPDIR");
    testing::CliTest::TearDown();
  }
  json Report(const std::string& out) {
    std::ifstream in(fs::path(out) / "report.json");
    EXPECT_TRUE(in.good()) << "no report.json in " << out;
    return in.good() ? json::parse(in) : json();
  }
  // What was judged, per sample and output, without timings.
  static json Judged(const json& report) {
    json judged = json::array();
    for (const json& result : report["results"]) {
      judged.push_back({result["sample"], result["output"], result["verdict"],
                        result["stats"]["errors"]["max_abs_error"], result["stats"]["mismatches"]});
    }
    return judged;
  }
};

TEST_F(ManySamplesCliTest, StreamedSpilledAndHeldRunsJudgeTheSame) {
  const std::vector<std::string> pair = {"compare", Model("tinycnn.onnx"),
                                         Model("tinycnn_perturbed.onnx")};
  auto run = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args = pair;
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--out", Path(out)});
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, 1) << Describe(r);  // the perturbed weight fails
    return Report(Path(out));
  };
  const json streamed = run("streamed", {"--samples", "40"});
  // 16 KiB for the run: the source's outputs held ahead are capped at 2 KiB (25 samples of
  // tinycnn's 80 bytes), the rest wait on disk until the target's session is built.
  const json spilled = run("spilled", {"--samples", "40", "--max-run-bytes", "16K"});
  // --per-node reads every sample again, so they are all held.
  const json held = run("held", {"--samples", "40", "--per-node"});
  ASSERT_EQ(streamed["inputs"]["samples"], 40);
  ASSERT_EQ(Judged(streamed).size(), 80u);
  EXPECT_EQ(Judged(spilled), Judged(streamed));
  EXPECT_EQ(Judged(held), Judged(streamed));
  EXPECT_EQ(spilled["inputs"]["samples"], 40);
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp")) << "a scratch folder was left in " << dir_ / "tmp";

  // Saved as they stream, in both layouts: what was saved judges the same again, the source's
  // saved outputs standing in for the source.
  for (const std::string& layout : {std::string(".npz"), std::string("")}) {
    const std::string inputs = Path("inputs" + layout);
    const std::string outputs = Path("outputs" + layout);
    const json saved = run("saved" + layout, {"--samples", "40", "--max-run-bytes", "16K",
                                              "--save-inputs", inputs, "--save-outputs", outputs});
    EXPECT_EQ(saved["inputs"]["saved_to"], inputs);
    EXPECT_EQ(saved["source"]["outputs_saved_to"], outputs);
    const json loaded = run("loaded" + layout, {"--load-inputs", inputs});
    EXPECT_EQ(Judged(loaded), Judged(streamed)) << layout;
    ProcessResult r = Convgate({"compare", outputs, Model("tinycnn_perturbed.onnx"),
                                "--load-inputs", inputs, "--out", Path("from_saved" + layout)});
    EXPECT_EQ(r.exit_code, 1) << Describe(r);
    EXPECT_EQ(Judged(Report(Path("from_saved" + layout))), Judged(streamed)) << layout;
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp")) << "a scratch folder was left in " << dir_ / "tmp";
}

TEST_F(ManySamplesCliTest, HeldInputsStillRespectTheRunLimit) {
  // Held (--per-node), 40 samples of 3 KiB exceed 64 KiB; streamed, two are held at a time, and
  // saving them (--save-inputs) holds none more.
  ProcessResult held = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"),
                                 "--samples", "40", "--max-run-bytes", "64K", "--per-node"});
  EXPECT_EQ(held.exit_code, 3) << Describe(held);
  EXPECT_NE(held.err.find("--max-run-bytes"), std::string::npos) << Describe(held);
  ProcessResult streamed =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"), "--samples", "40",
                "--max-run-bytes", "64K", "--save-inputs", Path("inputs.npz")});
  EXPECT_EQ(streamed.exit_code, 0) << Describe(streamed);
}

}  // namespace
}  // namespace convgate
