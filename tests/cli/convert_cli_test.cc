// `convgate convert` and `convgate cache` on the real binary: built-in conversions checked with
// `convgate compare`, an external converter failing every way it can, the cache and its pruning.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "graph/onnx_test_util.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;

const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();
const std::string kFake =
    (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/fake_converter.py").string();

using testing::Describe;

class ConvertCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    testing::CliTest::SetUp();
    // Every convgate this test starts uses a private cache (the environment is inherited).
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    ::unsetenv("CONVGATE_CACHE_MAX_BYTES");
    ::unsetenv("CONVGATE_CACHE_MIN_AGE_SECONDS");
  }
  void TearDown() override {
    ::unsetenv("CONVGATE_CACHE_DIR");
    testing::CliTest::TearDown();
  }

  std::string FakeCommand(const std::string& mode, const std::string& extra = "") const {
    return "/usr/bin/python3 '" + kFake + "' " + mode + " {src} {out}" + extra;
  }
};

// A model file named without an extension could be written but not loaded (no backend can tell
// its format): refused before anything runs, with nothing written.
TEST_F(ConvertCliTest, AnOutputWithoutAnExtensionIsRefusedBeforeConverting) {
  for (const std::string& command : {"convert", "verify"}) {
    ProcessResult r = Convgate({command, kTinyCnn, "--to", "fp16", "-o", Path("no_extension")});
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find("-o " + Path("no_extension") + " has no extension"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(Path("no_extension")));
  }
}

TEST_F(ConvertCliTest, OpsetUpgradePassesCompare) {
  ProcessResult r =
      Convgate({"convert", kTinyCnn, "--to", "opset:17", "-o", Path("tinycnn_opset17.onnx")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("opset 13 -> 17"), std::string::npos) << r.out;
  ProcessResult compare = Convgate({"compare", kTinyCnn, Path("tinycnn_opset17.onnx")});
  EXPECT_EQ(compare.exit_code, 0) << Describe(compare);
  ProcessResult inspect = Convgate({"inspect", Path("tinycnn_opset17.onnx"), "--json"});
  ASSERT_EQ(inspect.exit_code, 0);
  EXPECT_EQ(json::parse(inspect.out)["opsets"][0]["version"], 17) << inspect.out;
}

TEST_F(ConvertCliTest, Fp16PassesUnderFp16TolerancesAndFailsUnderFp32Defaults) {
  ProcessResult r = Convgate({"convert", kTinyCnn, "--to", "fp16", "-o", Path("fp16.onnx")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ProcessResult loose = Convgate({"compare", kTinyCnn, Path("fp16.onnx"), "--samples", "4",
                                  "--atol", "2.5e-3", "--rtol", "5e-3"});
  EXPECT_EQ(loose.exit_code, 0) << Describe(loose);
  // Held to float32's values it fails: a float16 network is not a float32 one.
  ProcessResult strict = Convgate({"compare", kTinyCnn, Path("fp16.onnx"), "--samples", "4",
                                   "--atol", "1e-5", "--rtol", "1e-3"});
  EXPECT_EQ(strict.exit_code, 1) << Describe(strict);
  EXPECT_NE(strict.out.find("FAIL"), std::string::npos);
  // Left to its defaults, compare sees that the target computes in float16 and judges it as
  // verify --to fp16 does (gate::DecidePairPolicy).
  ProcessResult detected = Convgate({"compare", kTinyCnn, Path("fp16.onnx"), "--samples", "4"});
  EXPECT_EQ(detected.exit_code, 0) << Describe(detected);
  EXPECT_NE(detected.out.find("network-level float16 default"), std::string::npos) << detected.out;
}

TEST_F(ConvertCliTest, OrtOptimizedAllPassesCompare) {
  ProcessResult r =
      Convgate({"convert", kTinyCnn, "--to", "ort-optimized:all", "-o", Path("opt.onnx")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ProcessResult compare = Convgate({"compare", kTinyCnn, Path("opt.onnx"), "--samples", "2"});
  EXPECT_EQ(compare.exit_code, 0) << Describe(compare);
}

TEST_F(ConvertCliTest, Fp16ReportsOutOfRangeValuesAndClampsOnlyOnRequest) {
  onnx::ModelProto model = testing::ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  big = Constant <value = float[2] {1000000.0, 2.0}> ()
  y = Mul(x, big)
}
)");
  model.mutable_graph()->mutable_node(0)->set_name("big_constant");
  testing::WriteModel(model, dir_ / "big.onnx");
  ProcessResult plain =
      Convgate({"convert", Path("big.onnx"), "--to", "fp16", "-o", Path("a.onnx"), "--json"});
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  const std::string notes = json::parse(plain.out)["notes"].dump();
  EXPECT_NE(notes.find("1 value(s) in 1 tensor(s) are outside float16's range"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("the largest is 1e+06 in Constant 'big_constant'"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("became +-inf"), std::string::npos) << notes;
  ProcessResult clamped = Convgate({"convert", Path("big.onnx"), "--to", "fp16", "-o",
                                    Path("b.onnx"), "--param", "clamp=1", "--json"});
  ASSERT_EQ(clamped.exit_code, 0) << Describe(clamped);
  EXPECT_NE(json::parse(clamped.out)["notes"].dump().find("clamped to +-65504"), std::string::npos);
  // Unclamped, the weight is inf and the output says so; clamped, it is finite.
  ProcessResult run_plain = Convgate({"run", Path("a.onnx")});
  EXPECT_EQ(run_plain.exit_code, 1) << Describe(run_plain);
  ProcessResult run_clamped = Convgate({"run", Path("b.onnx")});
  EXPECT_EQ(run_clamped.exit_code, 0) << Describe(run_clamped);
}

TEST_F(ConvertCliTest, TheSecondIdenticalConversionIsACacheHit) {
  const std::vector<std::string> args = {"convert", kTinyCnn,          "--to",  "fp16",
                                         "-o",      Path("fp16.onnx"), "--json"};
  ProcessResult first = Convgate(args);
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  ProcessResult second = Convgate(args);
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  json one = json::parse(first.out), two = json::parse(second.out);
  EXPECT_FALSE(one["cache"]["hit"].get<bool>());
  EXPECT_TRUE(two["cache"]["hit"].get<bool>());
  EXPECT_EQ(two["attempts"], 0);
  EXPECT_EQ(one["output"]["sha256"], two["output"]["sha256"]);
  EXPECT_EQ(two["notes"], one["notes"]);  // what the converter said is kept with the result
  EXPECT_LT(two["seconds"].get<double>(), one["seconds"].get<double>());
  ProcessResult other = Convgate({"convert", kTinyCnn, "--to", "fp16", "-o", Path("fp16b.onnx"),
                                  "--param", "keep_io_types=0", "--json"});
  ASSERT_EQ(other.exit_code, 0) << Describe(other);
  EXPECT_NE(json::parse(other.out)["cache"]["key"], one["cache"]["key"]);
}

TEST_F(ConvertCliTest, ExternalConverterFailuresAreTypedAndNamed) {
  struct Case {
    std::string mode;
    std::string type;
    std::string message;
  };
  for (const Case& c : {Case{"fail", "conversion failed", "exited with code 1"},
                        Case{"nothing", "no output", "wrote nothing"},
                        Case{"garbage", "invalid output", "not a valid ONNX model"},
                        Case{"partial", "conversion failed", "crashed while writing"}}) {
    ProcessResult r = Convgate({"convert", kTinyCnn, "-o", Path("out.onnx"), "--converter",
                                FakeCommand(c.mode), "--retries", "0"});
    EXPECT_EQ(r.exit_code, 3) << c.mode << "\n" << Describe(r);
    EXPECT_NE(r.err.find("error (convert, " + c.type + ")"), std::string::npos) << c.mode << "\n"
                                                                                << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.mode << "\n" << r.err;
    EXPECT_NE(r.err.find("tinycnn.onnx"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("fake_converter.py"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out.onnx")) << c.mode;
  }
  ProcessResult list = Convgate({"cache", "ls", "--json"});
  ASSERT_EQ(list.exit_code, 0) << Describe(list);
  EXPECT_TRUE(json::parse(list.out)["entries"].empty()) << list.out;
}

TEST_F(ConvertCliTest, TimeoutsAndRetries) {
  ProcessResult hung = Convgate({"convert", kTinyCnn, "-o", Path("out.onnx"), "--converter",
                                 FakeCommand("sleep"), "--timeout", "0.3", "--retries", "0"});
  EXPECT_EQ(hung.exit_code, 3) << Describe(hung);
  EXPECT_NE(hung.err.find("error (convert, timed out)"), std::string::npos) << hung.err;
  ProcessResult flaky =
      Convgate({"convert", kTinyCnn, "-o", Path("out.onnx"), "--converter",
                FakeCommand("transient", " --counter " + Path("runs") + " --failures 2"),
                "--backoff", "0.01", "--json"});
  ASSERT_EQ(flaky.exit_code, 0) << Describe(flaky);
  EXPECT_EQ(json::parse(flaky.out)["attempts"], 3);
  EXPECT_TRUE(fs::exists(dir_ / "out.onnx"));
}

TEST_F(ConvertCliTest, UsageErrorsExitTwo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"convert", kTinyCnn, "--to", "opset:18", "-o", Path("o.onnx")},
        std::vector<std::string>{"convert", kTinyCnn, "--to", "fp64", "-o", Path("o.onnx")},
        std::vector<std::string>{"convert", kTinyCnn, "--to", "fp16", "-o", Path("o.onnx"),
                                 "--param", "clamp"},
        std::vector<std::string>{"convert", kTinyCnn, "-o", Path("o.onnx")},
        std::vector<std::string>{"convert", kTinyCnn, "-o", Path("o.onnx"), "--converter",
                                 "python3 'unterminated {src} {out}"},
        std::vector<std::string>{"cache", "prune", "--max-bytes", "lots"}}) {
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, 2) << args[3] << "\n" << Describe(r);
  }
  ProcessResult missing =
      Convgate({"convert", Path("nope.onnx"), "--to", "fp16", "-o", Path("o.onnx")});
  EXPECT_EQ(missing.exit_code, 3) << Describe(missing);
  EXPECT_NE(missing.err.find("nope.onnx"), std::string::npos);
  EXPECT_NE(missing.err.find("source not found"), std::string::npos) << missing.err;
}

// A stall limit that is not a duration is a usage error naming the variable, not a silent default.
TEST_F(ConvertCliTest, BadConverterStallSecondsIsAUsageError) {
  ::setenv("CONVGATE_CONVERTER_STALL_SECONDS", "abc", 1);
  ProcessResult r = Convgate({"convert", kTinyCnn, "--to", "fp16", "-o", Path("o.onnx")});
  ::unsetenv("CONVGATE_CONVERTER_STALL_SECONDS");
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("CONVGATE_CONVERTER_STALL_SECONDS: duration 'abc'"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(Path("o.onnx")));
}

TEST_F(ConvertCliTest, CachePruneHonoursSizeAndAgeFromFlagsAndEnvironment) {
  for (const std::string kind : {"fp16", "opset:17"}) {
    ProcessResult r = Convgate({"convert", kTinyCnn, "--to", kind, "-o", Path("o.onnx")});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
  }
  ProcessResult list = Convgate({"cache", "ls", "--json"});
  ASSERT_EQ(list.exit_code, 0);
  EXPECT_EQ(json::parse(list.out)["entries"].size(), 2u) << list.out;
  // The entries were just used: the default minimum age (one day) protects them.
  ProcessResult young = Convgate({"cache", "prune", "--max-bytes", "0", "--json"});
  ASSERT_EQ(young.exit_code, 0) << Describe(young);
  EXPECT_TRUE(json::parse(young.out)["removed"].empty());
  EXPECT_EQ(json::parse(young.out)["kept_too_young"], 2);
  ::setenv("CONVGATE_CACHE_MIN_AGE_SECONDS", "0", 1);
  ::setenv("CONVGATE_CACHE_MAX_BYTES", "1G", 1);
  ProcessResult under = Convgate({"cache", "prune", "--json"});
  EXPECT_TRUE(json::parse(under.out)["removed"].empty()) << under.out;
  ProcessResult dry = Convgate({"cache", "prune", "--max-bytes", "0", "--dry-run", "--json"});
  EXPECT_EQ(json::parse(dry.out)["removed"].size(), 2u) << dry.out;
  ProcessResult pruned = Convgate({"cache", "prune", "--max-bytes", "0"});
  ASSERT_EQ(pruned.exit_code, 0) << Describe(pruned);
  EXPECT_NE(pruned.out.find("removed 2 of 2 entries"), std::string::npos) << pruned.out;
  ProcessResult empty = Convgate({"cache", "ls"});
  EXPECT_NE(empty.out.find("0 entries"), std::string::npos) << empty.out;
  // Two entries of one source and kind are told apart by their params in the text listing.
  for (const std::string param : {"keep_io_types=0", "keep_io_types=1"}) {
    ProcessResult r =
        Convgate({"convert", kTinyCnn, "--to", "fp16", "-o", Path("k.onnx"), "--param", param});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
  }
  ProcessResult listed = Convgate({"cache", "ls"});
  EXPECT_NE(listed.out.find("PARAMS"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("keep_io_types=0"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("keep_io_types=1"), std::string::npos) << listed.out;
  ::setenv("CONVGATE_CACHE_MAX_BYTES", "many", 1);
  EXPECT_EQ(Convgate({"cache", "prune"}).exit_code, 2);
}

}  // namespace
}  // namespace convgate
