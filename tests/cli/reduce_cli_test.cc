// `convgate reduce` on the real binary: a fault injected into one node of tinycnn becomes a
// one-node reproducer folder whose command fails on its own, for a numeric perturbation and for an
// introduced NaN; models that agree have nothing to reduce; bad input is a clear error.
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();

class ReduceCliTest : public testing::CliTest {
 protected:
  std::string Inject(const std::string& fault) {
    const std::string out = Path(fault + ".onnx");
    ProcessResult r = testing::RunProcess(
        {Tool("convgate-inject-fault").string(), kTinyCnn, out, "--fault", fault});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return out;
  }
  json ReadJson(const fs::path& path) const {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "missing " << path;
    return in.good() ? json::parse(in) : json::object();
  }
  // Runs the folder's repro.sh with this build's binary.
  ProcessResult RunRepro(const fs::path& folder) {
    ::setenv("CONVGATE", Binary().c_str(), 1);
    return testing::RunProcess({(folder / "repro.sh").string()});
  }
};

TEST_F(ReduceCliTest, APerturbedConvBecomesAOneNodeReproducerThatFailsOnItsOwn) {
  const std::string broken = Inject("perturb-conv");
  const fs::path folder = Path("repro");
  ProcessResult r = Convgate({"reduce", kTinyCnn, broken, "-o", folder.string(), "--samples", "2"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("REDUCED"), std::string::npos) << r.out;
  for (const char* file : {"node.onnx", "inputs.npz", "expected.npz", "repro.sh", "README.md",
                           "report.json", "dataset.npz"}) {
    EXPECT_TRUE(fs::exists(folder / file)) << file;
  }
  const json report = ReadJson(folder / "report.json");
  EXPECT_EQ(report["node"]["name"], "Conv_conv");
  EXPECT_EQ(report["node"]["op_type"], "Conv");
  EXPECT_NE(report["reason"].get<std::string>().find("culprit"), std::string::npos);
  EXPECT_EQ(report["reproduces"], true);

  // The reproducer stands alone: one node, and its command fails (exit 1) naming its output.
  ProcessResult inspect = Convgate({"inspect", (folder / "node.onnx").string(), "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  EXPECT_EQ(json::parse(inspect.out)["node_count"], 1);
  ProcessResult repro = RunRepro(folder);
  EXPECT_EQ(repro.exit_code, 1) << Describe(repro);
  EXPECT_NE(repro.out.find("output 'conv'"), std::string::npos) << repro.out;
  EXPECT_NE(ReadJson(folder / "report.json")["command"].get<std::string>().find("--load-inputs"),
            std::string::npos);
}

// Issue 24: reduce packaged the Cast a float16 conversion puts after a node it keeps in float32,
// and answered NOT REDUCED. The perturbed convolution is reduced instead, its inputs and expected
// output in the dtypes the target computes in (float16), so the reproducer fails on values.
TEST_F(ReduceCliTest, AnFp16ConversionIsReducedToThePerturbedNodeNotACast) {
  ProcessResult injected =
      testing::RunProcess({Tool("convgate-inject-fault").string(), kTinyCnn, Path("broken.onnx"),
                           "--fault", "perturb-conv", "--factor", "1.05"});
  ASSERT_EQ(injected.exit_code, 0) << Describe(injected);
  ProcessResult converted = Convgate({"convert", Path("broken.onnx"), "--to", "fp16", "--param",
                                      "op_block_list=Relu", "-o", Path("fp16.onnx")});
  ASSERT_EQ(converted.exit_code, 0) << Describe(converted);
  const fs::path folder = Path("repro");
  ProcessResult r = Convgate({"reduce", kTinyCnn, Path("fp16.onnx"), "-o", folder.string()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = ReadJson(folder / "report.json");
  EXPECT_EQ(report["node"]["name"], "Conv_conv") << report.dump(1);
  EXPECT_EQ(report["reproduces"], true);
  EXPECT_NE(json(report["notes"]).dump().find("rounded to float16"), std::string::npos)
      << report["notes"].dump(1);
  ProcessResult repro = RunRepro(folder);
  EXPECT_EQ(repro.exit_code, 1) << Describe(repro);
  EXPECT_EQ(repro.out.find("dtype mismatch"), std::string::npos) << repro.out;
}

TEST_F(ReduceCliTest, AnIntroducedNaNIsReducedToTheNodeThatIntroducesIt) {
  const std::string broken = Inject("nan-node");
  const fs::path folder = Path("repro");
  ProcessResult r = Convgate({"reduce", kTinyCnn, broken, "-o", folder.string()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json report = ReadJson(folder / "report.json");
  EXPECT_EQ(report["node"]["op_type"], "Log") << report["node"].dump();
  // The Log's input exists only in the target: captured from it, and said so.
  EXPECT_NE(json(report["notes"]).dump().find("captured from the target"), std::string::npos);
  const json& stats = report["reproduction"]["results"][0]["stats"]["non_finite"];
  EXPECT_GT(stats["introduced_nan"].get<int64_t>(), 0) << stats.dump();
  EXPECT_EQ(RunRepro(folder).exit_code, 1);
}

TEST_F(ReduceCliTest, ModelsThatAgreeHaveNothingToReduce) {
  const fs::path folder = Path("repro");
  ProcessResult r = Convgate({"reduce", kTinyCnn, kTinyCnn, "-o", folder.string()});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("nothing to reduce"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(folder / "node.onnx"));
}

TEST_F(ReduceCliTest, ANodeThatOnlyInheritsTheErrorDoesNotReproduceAndSaysWhy) {
  const std::string broken = Inject("perturb-conv");
  const fs::path folder = Path("repro");
  ProcessResult r =
      Convgate({"reduce", kTinyCnn, broken, "-o", folder.string(), "--node", "Relu_relu"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  const json report = ReadJson(folder / "report.json");
  EXPECT_EQ(report["node"]["name"], "Relu_relu");
  EXPECT_EQ(report["reproduces"], false);
  EXPECT_NE(report["notes"].dump().find("inherited from upstream"), std::string::npos);
  EXPECT_EQ(RunRepro(folder).exit_code, 0);
}

// Issue 9: --node on a node the fault does not reach (its error is zero) said the error was
// "inherited from upstream nodes".
TEST_F(ReduceCliTest, ANodeThatPassesHasNothingToReduce) {
  // Gemm's bias dropped: everything before the Gemm is untouched.
  const std::string gemm = Path("gemm.onnx");
  ProcessResult injected =
      testing::RunProcess({Tool("convgate-inject-fault").string(), kTinyCnn, gemm, "--fault",
                           "drop-bias", "--node", "Gemm_logits"});
  ASSERT_EQ(injected.exit_code, 0) << Describe(injected);
  const fs::path folder = Path("repro");
  ProcessResult r =
      Convgate({"reduce", kTinyCnn, gemm, "-o", folder.string(), "--node", "Conv_conv"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("node 'Conv_conv' (Conv) passes in the whole model"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the culprit is node 'Gemm_logits' (Gemm)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NOT REDUCED: the node passes in the whole model, nothing to reduce there"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("inherited"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(folder / "node.onnx"));
  const json report = ReadJson(folder / "report.json");
  EXPECT_EQ(report["node"]["name"], "Conv_conv");
  EXPECT_EQ(report["reproduces"], false);
}

TEST_F(ReduceCliTest, BadInputIsAClearError) {
  ProcessResult no_out = Convgate({"reduce", kTinyCnn, kTinyCnn});
  EXPECT_EQ(no_out.exit_code, 2) << Describe(no_out);
  ProcessResult unknown = Convgate(
      {"reduce", kTinyCnn, Inject("perturb-conv"), "-o", Path("a"), "--node", "no_such_node"});
  EXPECT_EQ(unknown.exit_code, 2) << Describe(unknown);
  EXPECT_NE(unknown.err.find("no_such_node"), std::string::npos) << unknown.err;
  { std::ofstream(Path("truncated.onnx"), std::ios::binary) << "\x08\x07\x12"; }
  ProcessResult truncated = Convgate({"reduce", kTinyCnn, Path("truncated.onnx"), "-o", Path("b")});
  EXPECT_EQ(truncated.exit_code, 3) << Describe(truncated);
  EXPECT_NE(truncated.err.find("truncated.onnx"), std::string::npos) << truncated.err;
}

}  // namespace
}  // namespace convgate
