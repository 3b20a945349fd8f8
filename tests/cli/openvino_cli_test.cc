// `convgate convert` to OpenVINO and through Hugging Face's optimum exporters on the real binary,
// with the project's Python environment (CONVGATE_VENV, else ~/.cache/convgate-deps/venv): the IR
// of tinycnn.onnx and of the torchvision resnet18 TorchScript fixture read back by OpenVINO (and
// resnet18's outputs against torch's), fp16 weights, a broken model's exit 3 with the exporter's
// message, tiny random-weight GPT-2 and BERT folders (tests/fixtures/tiny_hf_model.py) through
// optimum-openvino and optimum-onnx, and the int4 fallback on an injected out-of-memory kill.
// Label slow: each export takes 5-60 s on two cores. Skipped when the venv is missing.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"
#include "testing/torch_fixtures.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();
const std::string kTinyHf =
    (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/tiny_hf_model.py").string();

using testing::VenvPython;

// Element types of an IR's Constant nodes, as OpenVINO reads the model: "f32 i64", "f16 i64 u4".
constexpr char kConstantTypes[] = R"(
import sys, openvino as ov
model = ov.Core().read_model(sys.argv[1])
types = {op.get_element_type().get_type_name() for op in model.get_ops()
         if op.get_type_name() == "Constant"}
print(" ".join(sorted(types)))
)";

// The largest |difference| between resnet18's TorchScript and its IR on one seeded input, and the
// largest |output|. In float32: OpenVINO's CPU plugin computes in bfloat16 by default where the CPU
// has it (AMX / AVX512-BF16, as here: 1% of the output's magnitude off), which is a property of the
// runtime, not of the conversion under test.
constexpr char kTorchVsIr[] = R"(
import sys, numpy, torch, openvino as ov
torch.manual_seed(0)
x = torch.rand(1, 3, 224, 224)
expected = torch.jit.load(sys.argv[1]).eval()(x).detach().numpy()
compiled = ov.Core().compile_model(sys.argv[2], "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
got = compiled(x.numpy())[compiled.outputs[0]]
print(float(numpy.abs(expected - got).max()), float(numpy.abs(expected).max()))
)";

class OpenvinoCliTest : public testing::CliTest {
 protected:
  static void SetUpTestSuite() {
    python_ = VenvPython();
    ProcessResult probe = testing::RunProcess({python_, "-c", "import openvino, optimum.intel"});
    if (probe.exit_code != 0)
      skip_ = python_ + " cannot import openvino and optimum.intel: " +
              probe.err.substr(probe.err.rfind('\n', probe.err.size() - 2) + 1);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_ << " (scripts/setup.sh creates the venv)";
    testing::CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    ::setenv("HF_HUB_OFFLINE", "1", 1);
  }
  void TearDown() override {
    ::unsetenv("CONVGATE_CACHE_DIR");
    ::unsetenv("CONVGATE_INJECT_EXPORT_OOM");
    testing::CliTest::TearDown();
  }

  // The stdout of the venv's python running `code` with `args`; fails the test on an error.
  std::string Python(const std::string& code, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {python_, "-c", code};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = testing::RunProcess(argv);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return r.out.substr(0, r.out.find_last_not_of('\n') + 1);
  }

  std::string TinyHfModel(const std::string& type, int hidden = 32) {
    const std::string out = Path(type + std::to_string(hidden));
    ProcessResult r =
        testing::RunProcess({python_, kTinyHf, type, out, "--hidden", std::to_string(hidden)});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return out;
  }

  // `convgate convert ... --json`: the record, after checking the exit code.
  json Convert(std::vector<std::string> args, int expected_exit = 0) {
    args.insert(args.begin(), "convert");
    args.push_back("--json");
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, expected_exit) << Describe(r);
    json record = json::parse(r.out, nullptr, false);
    if (record.is_discarded()) ADD_FAILURE() << "not JSON: " << Describe(r);
    last_stderr_ = r.err;
    return record;
  }

  static std::string Notes(const json& record) {
    std::string text;
    for (const json& note : record.value("notes", json::array())) text += note.dump() + "\n";
    return text;
  }

  inline static std::string python_;
  inline static std::string skip_;
  std::string last_stderr_;
};

TEST_F(OpenvinoCliTest, TinyCnnBecomesAnIrThatOpenvinoReadsWithFloat32Weights) {
  const json record = Convert({kTinyCnn, "--to", "openvino", "-o", Path("ir/tinycnn.xml")});
  EXPECT_EQ(record["output"]["path"], Path("ir/tinycnn.xml")) << record.dump(1);
  EXPECT_TRUE(fs::is_regular_file(Path("ir/tinycnn.bin")));
  // An ONNX file converts in-process through OpenVINO's C++ runtime (the venv's Python
  // convert_model in a build without it).
  EXPECT_TRUE(record["tool"] == "read_model + save_model (OpenVINO C++ runtime)" ||
              record["tool"].get<std::string>().find("openvino.convert_model") != std::string::npos)
      << record.dump(1);
  EXPECT_NE(record["tool_version"].get<std::string>().find("openvino 2026"), std::string::npos);
  EXPECT_EQ(Python(kConstantTypes, {Path("ir/tinycnn.xml")}), "f32 i64");
  // Again: a cache hit, the IR's .bin copied with it.
  const json again = Convert({kTinyCnn, "--to", "openvino", "-o", Path("again/tinycnn.xml")});
  EXPECT_TRUE(again["cache"]["hit"].get<bool>()) << again.dump(1);
  EXPECT_TRUE(fs::is_regular_file(Path("again/tinycnn.bin")));
}

// Two torch.export programs (.pt2) made by the venv's torch: a small CNN with a dynamic batch,
// and the same with its head's weights scaled by 1.05.
constexpr char kMakePrograms[] = R"(
import sys, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.head = torch.nn.Linear(8, 10)
    def forward(self, image):
        return self.head(torch.relu(self.conv(image)).mean(dim=(2, 3)))
torch.manual_seed(0)
net = Net().eval()
example = (torch.rand(2, 3, 16, 16),)
batch = {"image": {0: torch.export.Dim("batch", min=1, max=64)}}
torch.export.save(torch.export.export(net, example, dynamic_shapes=batch), sys.argv[1])
with torch.no_grad():
    net.head.weight.mul_(1.05)
torch.export.save(torch.export.export(net, example, dynamic_shapes=batch), sys.argv[2])
)";

// A torch.export program as a source: it runs on the torch-export backend (the venv's torch),
// `verify` with no --to takes Path B (convert_model of the program) and passes, and the IR of
// the perturbed program fails against it; the same through torch.onnx.export(dynamo=True).
TEST_F(OpenvinoCliTest, ATorchExportProgramIsVerifiedThroughConvertModelAndDynamo) {
  const std::string faithful = Path("net.pt2"), perturbed = Path("net_perturbed.pt2");
  Python(kMakePrograms, {faithful, perturbed});
  ProcessResult run = Convgate({"run", faithful, "--shape", "image:2x3x16x16"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_NE(run.out.find("torch-export"), std::string::npos) << run.out;

  ProcessResult verify =
      Convgate({"verify", faithful, "--shape", "image:2x3x16x16", "--out", Path("verified")});
  ASSERT_EQ(verify.exit_code, 0) << Describe(verify);
  std::ifstream in(Path("verified/verify_result.json"));
  const json result = json::parse(in, nullptr, false);
  ASSERT_FALSE(result.is_discarded());
  EXPECT_EQ(result["conversion_path"], "convert_model") << result.dump(1);
  EXPECT_EQ(result["verify_passed"], true) << result.dump(1);

  const json record = Convert({perturbed, "--to", "openvino", "-o", Path("perturbed.xml")});
  EXPECT_NE(record["tool"].get<std::string>().find("convert_model"), std::string::npos)
      << record.dump(1);
  ProcessResult compare = Convgate(
      {"compare", faithful, Path("perturbed.xml"), "--shape", "image:2x3x16x16", "--json"});
  EXPECT_EQ(compare.exit_code, 1) << Describe(compare);

  // Item 7's other converter: torch.onnx.export(dynamo=True) in the venv. The ONNX keeps the
  // program's input name and its dynamic batch; verify passes, and the perturbed program's ONNX
  // fails against the faithful program.
  ProcessResult to_onnx = Convgate(
      {"verify", faithful, "--to", "onnx", "--shape", "image:2x3x16x16", "--out", Path("to-onnx")});
  ASSERT_EQ(to_onnx.exit_code, 0) << Describe(to_onnx);
  std::ifstream onnx_in(Path("to-onnx/report.json"));
  const json onnx_report = json::parse(onnx_in, nullptr, false);
  ASSERT_FALSE(onnx_report.is_discarded());
  EXPECT_NE(onnx_report["conversion"]["tool"].get<std::string>().find("dynamo=True"),
            std::string::npos)
      << onnx_report["conversion"].dump(1);
  EXPECT_NE(onnx_report["conversion"]["tool_version"].get<std::string>().find("onnxscript"),
            std::string::npos)
      << onnx_report["conversion"].dump(1);
  Convert({perturbed, "--to", "onnx", "-o", Path("perturbed.onnx")});
  ProcessResult inspect = Convgate({"inspect", Path("perturbed.onnx"), "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  EXPECT_NE(inspect.out.find("\"image\""), std::string::npos) << inspect.out;
  ProcessResult onnx_compare = Convgate(
      {"compare", faithful, Path("perturbed.onnx"), "--shape", "image:2x3x16x16", "--json"});
  EXPECT_EQ(onnx_compare.exit_code, 1) << Describe(onnx_compare);
  // A parameter the program already fixes is a usage error, not ignored.
  ProcessResult shaped = Convgate({"convert", faithful, "--to", "onnx", "--param",
                                   "input_shape=1x3x16x16", "-o", Path("shaped.onnx")});
  EXPECT_EQ(shaped.exit_code, 2) << Describe(shaped);
  EXPECT_NE(shaped.err.find("carries its own inputs"), std::string::npos) << shaped.err;

  // A .pt2 that is no program: exit 3 naming the file and what torch.export.load said.
  std::ofstream(Path("junk.pt2")) << "not a zip";
  ProcessResult junk = Convgate({"run", Path("junk.pt2")});
  EXPECT_EQ(junk.exit_code, 3) << Describe(junk);
  EXPECT_NE(junk.err.find("torch.export.load cannot read " + Path("junk.pt2")), std::string::npos)
      << junk.err;
}

TEST_F(OpenvinoCliTest, Fp16CompressesTheWeights) {
  Convert({kTinyCnn, "--to", "openvino:fp16", "-o", Path("fp16.xml")});
  EXPECT_EQ(Python(kConstantTypes, {Path("fp16.xml")}), "f16 i64");
}

// NNCF's post-training int8, calibrated on verify's own inputs, judged by the quantization
// profile; compare recognises the FakeQuantize layers of the IR without being told.
TEST_F(OpenvinoCliTest, Int8QuantizesWithNncfAndPassesTheQuantizationProfile) {
  const std::string ir = Path("int8.xml");
  ProcessResult r = Convgate({"verify", kTinyCnn, "--to", "openvino:int8", "--dim", "batch=8",
                              "--samples", "4", "-o", ir});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("int8 by nncf.quantize: activation ranges calibrated on 4 sample(s)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("quantization profile of --to openvino:int8"), std::string::npos) << r.out;
  std::ifstream xml(ir);
  const std::string text((std::istreambuf_iterator<char>(xml)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"FakeQuantize\""), std::string::npos);
  ProcessResult compared =
      Convgate({"compare", kTinyCnn, ir, "--dim", "batch=8", "--samples", "4"});
  EXPECT_EQ(compared.exit_code, 0) << Describe(compared);
  EXPECT_NE(compared.out.find("quantization profile (the target quantizes:"), std::string::npos)
      << compared.out;
}

TEST_F(OpenvinoCliTest, AnIrGoesToAnXmlPathAndOtherVariantsAreUsageErrors) {
  ProcessResult onnx = Convgate({"convert", kTinyCnn, "--to", "openvino", "-o", Path("x.onnx")});
  EXPECT_EQ(onnx.exit_code, 2) << Describe(onnx);
  EXPECT_NE(onnx.err.find("must end in .xml"), std::string::npos) << onnx.err;
  ProcessResult int4 =
      Convgate({"convert", kTinyCnn, "--to", "openvino:int4", "-o", Path("x.xml")});
  EXPECT_EQ(int4.exit_code, 2) << Describe(int4);
  // int8 calibrates on samples: convert must be given them (verify uses its own inputs).
  ProcessResult int8 =
      Convgate({"convert", kTinyCnn, "--to", "openvino:int8", "-o", Path("x.xml")});
  EXPECT_EQ(int8.exit_code, 2) << Describe(int8);
  EXPECT_NE(int8.err.find("calibration=inputs.npz"), std::string::npos) << int8.err;
  ProcessResult folder =
      Convgate({"convert", kTinyCnn, "--to", "optimum-openvino", "-o", Path("out")});
  EXPECT_EQ(folder.exit_code, 2) << Describe(folder);
  EXPECT_NE(folder.err.find("Hugging Face model folder"), std::string::npos) << folder.err;
}

TEST_F(OpenvinoCliTest, ABrokenModelFailsWithExit3AndTheExportersMessage) {
  std::ifstream in(kTinyCnn, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(Path("broken.onnx"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  ProcessResult r =
      Convgate({"convert", Path("broken.onnx"), "--to", "openvino", "-o", Path("b.xml")});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("conversion failed"), std::string::npos) << r.err;
  // OpenVINO's own message, from whichever converter read it (in-process or the venv's script).
  EXPECT_TRUE(r.err.find("OpenVINO cannot read the model") != std::string::npos ||
              r.err.find("openvino_export.py: converting") != std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("broken.onnx"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("b.xml")));
  EXPECT_FALSE(fs::exists(Path("b.bin")));
}

TEST_F(OpenvinoCliTest, Gpt2ExportsThroughOptimumOpenvinoWithFp16Weights) {
  const std::string model = TinyHfModel("gpt2");
  const json record = Convert({model, "--to", "optimum-openvino", "-o", Path("gpt2-ov")});
  EXPECT_EQ(record["output"]["path"], Path("gpt2-ov")) << record.dump(1);
  EXPECT_TRUE(fs::is_regular_file(Path("gpt2-ov/openvino_model.bin")));
  EXPECT_TRUE(fs::is_regular_file(Path("gpt2-ov/config.json")));
  const std::string notes = Notes(record);
  EXPECT_NE(notes.find("task text-generation-with-past (config.json: model_type gpt2, "
                       "architecture GPT2LMHeadModel)"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("weight_format fp16"), std::string::npos) << notes;
  const std::string types = Python(kConstantTypes, {Path("gpt2-ov/openvino_model.xml")});
  EXPECT_NE(types.find("f16"), std::string::npos) << types;
  EXPECT_EQ(types.find("f32"), std::string::npos) << types;
  // The folder is cached as one entry and verified file by file on a hit.
  const json again = Convert({model, "--to", "optimum-openvino", "-o", Path("again")});
  EXPECT_TRUE(again["cache"]["hit"].get<bool>()) << again.dump(1);
  EXPECT_TRUE(fs::is_regular_file(Path("again/openvino_model.bin")));
}

TEST_F(OpenvinoCliTest, BertResolvesToFeatureExtractionAndExportsToOnnxAndOpenvino) {
  const std::string model = TinyHfModel("bert");
  const json onnx = Convert({model, "--to", "optimum-onnx", "-o", Path("bert-onnx")});
  EXPECT_EQ(onnx["output"]["path"], Path("bert-onnx/model.onnx")) << onnx.dump(1);
  EXPECT_NE(Notes(onnx).find("task feature-extraction (config.json: model_type bert, "
                             "architecture BertModel)"),
            std::string::npos)
      << onnx.dump(1);
  ProcessResult inspect = Convgate({"inspect", Path("bert-onnx/model.onnx"), "--json"});
  EXPECT_EQ(inspect.exit_code, 0) << Describe(inspect);
  EXPECT_NE(inspect.out.find("input_ids"), std::string::npos);
  const json ov = Convert({model, "--to", "optimum-openvino", "--param", "task=fill-mask",
                           "--param", "weight_format=int8", "-o", Path("bert-ov")});
  EXPECT_NE(Notes(ov).find("task fill-mask (the task parameter)"), std::string::npos) << ov.dump(1);
  EXPECT_TRUE(fs::is_regular_file(Path("bert-ov/openvino_model.xml")));
}

TEST_F(OpenvinoCliTest, Gpt2ExportsThroughOptimumOnnx) {
  const std::string model = TinyHfModel("gpt2");
  const json record = Convert({model, "--to", "optimum-onnx", "-o", Path("gpt2-onnx")});
  EXPECT_EQ(record["output"]["path"], Path("gpt2-onnx/model.onnx")) << record.dump(1);
  ProcessResult inspect = Convgate({"inspect", Path("gpt2-onnx/model.onnx"), "--json"});
  EXPECT_EQ(inspect.exit_code, 0) << Describe(inspect);
  EXPECT_NE(inspect.out.find("past_key_values"), std::string::npos);
}

// Fault injection: CONVGATE_INJECT_EXPORT_OOM=fp16 makes the fp16 export print a MemoryError and
// die of SIGKILL, as under the OOM killer; the export is redone with int4 weights and says so.
TEST_F(OpenvinoCliTest, AnFp16ExportKilledForMemoryFallsBackToInt4) {
  const std::string model = TinyHfModel("gpt2", 128);  // int4 groups of 128 need hidden 128
  ::setenv("CONVGATE_INJECT_EXPORT_OOM", "fp16", 1);
  const json record = Convert({model, "--to", "optimum-openvino", "-o", Path("int4")});
  const std::string notes = Notes(record);
  EXPECT_NE(notes.find("fallback: weight_format int4, because the fp16 export ran out of memory "
                       "(was killed by signal 9"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("weight_format int4"), std::string::npos) << notes;
  EXPECT_EQ(record["attempts"], 1) << record.dump(1);
  const std::string types = Python(kConstantTypes, {Path("int4/openvino_model.xml")});
  EXPECT_NE(types.find("u4"), std::string::npos) << types;
  // With the fallback off the kill is the answer: exit 3, nothing written.
  ProcessResult off = Convgate({"convert", model, "--to", "optimum-openvino", "--param",
                                "fallback=none", "--retries", "0", "-o", Path("none")});
  EXPECT_EQ(off.exit_code, 3) << Describe(off);
  EXPECT_NE(off.err.find("MemoryError"), std::string::npos) << off.err;
  EXPECT_FALSE(fs::exists(Path("none")));
}

// The seed's Path A end to end: the tiny GPT-2 and its optimum-intel export both generate on the
// hf backend (transformers on PyTorch, optimum-intel on OpenVINO); the token ids agree exactly and
// the first step's logits within the network-level float16 tolerances verify applies to an
// export with fp16 weights (unless told otherwise), which the report names as their origin.
TEST_F(OpenvinoCliTest, VerifyToOptimumOpenvinoGeneratesTheSameTokens) {
  const std::string model = TinyHfModel("gpt2");
  ProcessResult r =
      Convgate({"verify", model, "--to", "optimum-openvino", "--out", Path("verify")});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  std::ifstream report_in(Path("verify/report.json"));
  const json report = json::parse(report_in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << Describe(r);
  const json& comparison = report.contains("comparison") ? report["comparison"] : report;
  bool logits_seen = false;
  for (const json& result : comparison["results"]) {
    if (result["output"] != "first_step_logits") continue;
    logits_seen = true;
    EXPECT_EQ(result["policy"]["atol_origin"],
              "network-level float16 default of --to optimum-openvino (float16 weights; "
              "examples/policies/fp16-network.yaml)")
        << result["policy"].dump();
  }
  EXPECT_TRUE(logits_seen) << comparison.dump(1);
  std::ifstream in(Path("verify/verify_result.json"));
  const json result = json::parse(in, nullptr, false);
  ASSERT_TRUE(result.is_object()) << Describe(r);
  EXPECT_EQ(result["task"], "text-generation-with-past");
  EXPECT_TRUE(result["verify_passed"].get<bool>()) << result.dump(1);
  EXPECT_EQ(result["conversion_path"], "optimum-cli") << result.dump(1);
  EXPECT_NE(report["conversion_detail"].get<std::string>().find("optimum-cli export openvino"),
            std::string::npos)
      << report["conversion_detail"];
}

// The fallback reaches report.json's conversion_detail, and its int4 weights are judged by the
// weight-compression profile (not float32 defaults, which 260 of 264 logits failed): the gate
// passes. verify_result.json's conversion_path stays the reference's "optimum-cli".
TEST_F(OpenvinoCliTest, VerifyRecordsTheInt4FallbackInItsConversionDetail) {
  const std::string model = TinyHfModel("gpt2", 128);
  ::setenv("CONVGATE_INJECT_EXPORT_OOM", "fp16", 1);
  ProcessResult r =
      Convgate({"verify", model, "--to", "optimum-openvino", "--out", Path("verify")});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("weight-compression profile of --to optimum-openvino (int4 weights, the "
                       "fallback)"),
            std::string::npos)
      << Describe(r);
  std::ifstream in(Path("verify/verify_result.json"));
  const json result = json::parse(in, nullptr, false);
  ASSERT_TRUE(result.is_object()) << Describe(r);
  EXPECT_EQ(result["conversion_path"], "optimum-cli") << result.dump(1);
  std::ifstream report_in(Path("verify/report.json"));
  const json report = json::parse(report_in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << Describe(r);
  EXPECT_NE(report["conversion_detail"].get<std::string>().find(
                "; fallback: weight_format int4, because the fp16 export ran out of memory"),
            std::string::npos)
      << report["conversion_detail"];
}

// Injected hang: the fp16 export sleeps (CONVGATE_INJECT_EXPORT_HANG=fp16: no CPU, as the t5
// export deadlocked in a futex wait did). With a 5 s stall time it is found hung, not out of
// memory, retried once (hanging again), and only then falls back to int4 weights; the hidden
// size 32 of this GPT-2 does not take optimum's int4 group size 128, so the export takes 32 and
// says so. The whole conversion stays far below the 600 s timeout the hang used to sit out.
TEST_F(OpenvinoCliTest, AHungFp16ExportIsRetriedOnceThenFallsBackToInt4WithAFittingGroupSize) {
  const std::string model = TinyHfModel("gpt2", 32);
  ::setenv("CONVGATE_INJECT_EXPORT_HANG", "fp16", 1);
  ::setenv("CONVGATE_CONVERTER_STALL_SECONDS", "5", 1);
  const json record = Convert({model, "--to", "optimum-openvino", "-o", Path("int4")});
  ::unsetenv("CONVGATE_INJECT_EXPORT_HANG");
  ::unsetenv("CONVGATE_CONVERTER_STALL_SECONDS");
  const std::string notes = Notes(record);
  EXPECT_NE(notes.find("fallback: weight_format int4, because the fp16 export hung twice (hung: "
                       "no CPU progress for 5 s after the fp16 export hung: no CPU progress for 5 "
                       "s and was retried once)"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("int4 group size 32 instead of optimum's 128, which does not divide the "
                       "weight widths of config.json (n_embd 32"),
            std::string::npos)
      << notes;
  EXPECT_EQ(record["attempts"], 1) << record.dump(1);
  EXPECT_LT(record["seconds"].get<double>(), 300.0) << record.dump(1);
  const std::string types = Python(kConstantTypes, {Path("int4/openvino_model.xml")});
  EXPECT_NE(types.find("u4"), std::string::npos) << types;
}

class OpenvinoTorchCliTest : public testing::TorchCliTest {};

TEST_F(OpenvinoTorchCliTest, Resnet18TorchScriptBecomesAnIrThatComputesTheSame) {
  const std::string python = VenvPython();
  if (testing::RunProcess({python, "-c", "import openvino"}).exit_code != 0) {
    GTEST_SKIP() << python << " cannot import openvino (scripts/setup.sh creates the venv)";
  }
  ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  const std::string pt = Fixture("resnet18.pt");
  ProcessResult r = Convgate({"convert", pt, "--to", "openvino", "-o", Path("r18.xml")});
  ::unsetenv("CONVGATE_CACHE_DIR");
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ProcessResult diff = testing::RunProcess({python, "-c", kTorchVsIr, pt, Path("r18.xml")});
  ASSERT_EQ(diff.exit_code, 0) << Describe(diff);
  const double max_diff = std::stod(diff.out);
  const double magnitude = std::stod(diff.out.substr(diff.out.find(' ')));
  EXPECT_LT(max_diff, 1e-3 * magnitude) << diff.out;
}

// A copy of a TorchScript classifier with its last layer's bias shifted by 0.5: what a conversion
// that corrupts one tensor would compute.
constexpr char kPerturbTorchScript[] = R"(
import sys, torch
model = torch.jit.load(sys.argv[1])
with torch.no_grad():
    model.model.fc.bias.add_(0.5)  # the fixture wraps torchvision's model (torch_export.py)
model.save(sys.argv[2])
)";

// Build item 5: PyTorch -> OpenVINO through convert_model. The IR's input is named as forward()'s
// argument (the fixture's `input`, not TorchScript's debug name `input.1`), and --shape makes it
// static, so verify of
// the torchvision TorchScript classifier passes end to end. An IR of a perturbed copy, given as
// the target, fails the comparison (exit 1, not 3: the names match).
TEST_F(OpenvinoTorchCliTest, VerifyOfResnet18TorchScriptToOpenvinoPassesAndAPerturbedIrFails) {
  const std::string python = VenvPython();
  if (testing::RunProcess({python, "-c", "import openvino"}).exit_code != 0) {
    GTEST_SKIP() << python << " cannot import openvino (scripts/setup.sh creates the venv)";
  }
  ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  const std::string pt = Fixture("resnet18.pt");
  ProcessResult r = Convgate({"verify", pt, "--to", "openvino", "--shape", "input:1x3x224x224",
                              "-o", Path("r18.xml"), "--out", Path("out")});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  std::ifstream in(Path("out/verify_result.json"));
  const json result = json::parse(in, nullptr, false);
  ASSERT_TRUE(result.is_object()) << Describe(r);
  EXPECT_EQ(result["verify_passed"], true) << result.dump(1);
  EXPECT_EQ(result["conversion_path"], "convert_model") << result.dump(1);
  // The IR's input: named as forward()'s argument, static at --shape.
  const std::string inputs =
      testing::RunProcess(
          {python, "-c",
           "import sys, openvino as ov\n"
           "m = ov.Core().read_model(sys.argv[1])\n"
           "print(';'.join(i.get_any_name() + str(i.get_partial_shape()) for i in m.inputs))",
           Path("r18.xml")})
          .out;
  EXPECT_EQ(inputs, "input[1,3,224,224]\n");

  const std::string perturbed = Path("perturbed.pt");
  ProcessResult made = testing::RunProcess({python, "-c", kPerturbTorchScript, pt, perturbed});
  ASSERT_EQ(made.exit_code, 0) << Describe(made);
  ProcessResult converted = Convgate({"convert", perturbed, "--to", "openvino", "--param",
                                      "input_shape=1x3x224x224", "-o", Path("perturbed.xml")});
  ASSERT_EQ(converted.exit_code, 0) << Describe(converted);
  ProcessResult bad = Convgate({"verify", pt, "--target", Path("perturbed.xml"), "--shape",
                                "input:1x3x224x224", "--out", Path("bad")});
  ::unsetenv("CONVGATE_CACHE_DIR");
  EXPECT_EQ(bad.exit_code, 1) << Describe(bad);
  std::ifstream bad_in(Path("bad/verify_result.json"));
  const json bad_result = json::parse(bad_in, nullptr, false);
  ASSERT_TRUE(bad_result.is_object()) << Describe(bad);
  EXPECT_EQ(bad_result["verify_passed"], false);
  EXPECT_EQ(bad_result["e2e_passed"], true) << bad_result.dump(1);
  EXPECT_EQ(bad_result["conversion_path"], "given");
}

}  // namespace
}  // namespace convgate
